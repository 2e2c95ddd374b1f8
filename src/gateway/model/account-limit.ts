// Usage limits of the account behind the gateway (docs/flows.md#usage-limits), on when the gateway
// runs with `accountLimits` (personal mode turns it on; team gateways keep it off).
//
// The ACCOUNT is the gateway's model upstream: its one URL and key (or, in personal mode, the one
// user's credential). Every user and ticket of a gateway spends that one account, so one refusal
// closes it for all of them: a 429 with `anthropic-ratelimit-unified-status: rejected` (or, for
// Codex's OpenAI backend, a 429 with a window used up in its `x-codex-*` headers) records a
// hold until the rejected window's reset (the latest reset wins), and until then every model
// request is answered 3105 with the reset (nothing goes upstream) and no ticket is promoted.
// `stopAtUtilization` keeps headroom: an answer reporting a window's utilization above it stops
// promotion until that window's reset (running segments go on). The state is kept in the ticket
// store, so a gateway restart keeps a hold.
import type http from 'node:http';
import { BusinessCode } from '../../protocol/gateway';
import type { GatewayConfig } from '../config/schema';
import type { GatewayHttpError } from '../http/errors';
import { errors } from '../http/errors';
import type { Logger } from '../http/logger';
import type { TicketStore } from '../stores/store';
import type { AccountLimitState, AccountLimitStore } from './account-limit-store';
import { WindowShareMeter } from './window-share';

const EMPTY: AccountLimitState = { heldUntil: null, heldSince: null, heldWindow: null, promoteAfter: null };
/** A rejected answer that names no reset at all holds this long (then one request probes again). */
export const UNKNOWN_RESET_HOLD_MS = 60_000;
/** No reset is believed further than this (the longest window is 7 days): a bad header cannot close the account for good. */
export const MAX_HOLD_MS = 8 * 86_400_000;

const PREFIX = 'anthropic-ratelimit-unified-';
const WINDOWS = [
  { name: 'five_hour', key: '5h' },
  { name: 'seven_day', key: '7d' },
] as const;

/** Codex's windows (its backend's `x-codex-primary-*` is the 5-hour one, `x-codex-secondary-*` the weekly one). */
const CODEX_WINDOWS = [
  { name: 'five_hour', prefix: 'x-codex-primary-' },
  { name: 'seven_day', prefix: 'x-codex-secondary-' },
] as const;

/** One Codex window as its headers say: how much is used (0..1) and when it resets, or undefined. */
function codexWindow(headers: http.IncomingHttpHeaders, prefix: string, now: number): { used: number; resetAt: number } | undefined {
  const used = Number(header(headers, `${prefix}used-percent`)) / 100;
  const after = header(headers, `${prefix}reset-after-seconds`);
  const resetAt = epochMs(header(headers, `${prefix}reset-at`)) ?? (after && /^\d+$/.test(after) ? now + Number(after) * 1000 : undefined);
  return Number.isFinite(used) && resetAt !== undefined ? { used, resetAt } : undefined;
}

function header(headers: http.IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text.trim() === '' ? undefined : text.trim();
}

/** An epoch reset as the API sends it (seconds; milliseconds accepted too) in ms, or undefined. */
function epochMs(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d+(\.\d+)?$/.test(text)) return undefined;
  const n = Number(text);
  return Math.round(n > 1e12 ? n : n * 1000);
}

function retryAfterAt(text: string | undefined, now: number): number | undefined {
  if (text === undefined) return undefined;
  if (/^\d+$/.test(text)) return now + Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : date;
}

export interface UsageLimitReading {
  /** A 429 that says the account's limit is reached (unified status `rejected`). */
  rejected: boolean;
  /** For a rejected answer: until when, and which window said so. */
  resetAt: number | null;
  window: string | null;
  /** Windows whose reported utilization (0..1) is at or above the threshold, with their resets. */
  over: { window: string; utilization: number; resetAt: number }[];
}

/**
 * Reads the unified rate-limit headers of one model answer. For a rejected answer the reset is
 * the latest of the windows that say `rejected`; without per-window statuses, the unified reset,
 * then the representative claim's window, then Retry-After.
 */
export function readUsageLimit(
  status: number,
  headers: http.IncomingHttpHeaders,
  now: number,
  stopAtUtilization: number | null,
): UsageLimitReading {
  const unified = header(headers, `${PREFIX}status`);
  const codex = CODEX_WINDOWS.map((w) => ({ name: w.name, at: codexWindow(headers, w.prefix, now) }));
  const usedUp = codex.filter((w) => w.at !== undefined && w.at.used >= 1);
  const rejected = status === 429 && (unified === 'rejected' || usedUp.length > 0);
  let resetAt: number | null = null;
  let window: string | null = null;
  for (const w of status === 429 ? usedUp : []) {
    if (resetAt === null || w.at!.resetAt > resetAt) [resetAt, window] = [w.at!.resetAt, w.name];
  }
  if (rejected) {
    for (const w of WINDOWS) {
      const at = epochMs(header(headers, `${PREFIX}${w.key}-reset`));
      if (header(headers, `${PREFIX}${w.key}-status`) === 'rejected' && at !== undefined && (resetAt === null || at > resetAt)) {
        resetAt = at;
        window = w.name;
      }
    }
    const claim = WINDOWS.find((w) => w.name === header(headers, `${PREFIX}representative-claim`));
    const fallbacks: [string, number | undefined][] = [
      ['unified', epochMs(header(headers, `${PREFIX}reset`))],
      [claim?.name ?? '', claim ? epochMs(header(headers, `${PREFIX}${claim.key}-reset`)) : undefined],
      ['retry_after', retryAfterAt(header(headers, 'retry-after'), now)],
    ];
    for (const [name, at] of fallbacks) {
      if (resetAt !== null) break;
      if (at !== undefined) [resetAt, window] = [at, name];
    }
    if (resetAt === null || resetAt <= now) [resetAt, window] = [now + UNKNOWN_RESET_HOLD_MS, window ?? 'unknown'];
    resetAt = Math.min(resetAt, now + MAX_HOLD_MS);
  }
  const over: UsageLimitReading['over'] = [];
  if (stopAtUtilization !== null) {
    for (const w of WINDOWS) {
      const utilization = Number(header(headers, `${PREFIX}${w.key}-utilization`));
      const at = epochMs(header(headers, `${PREFIX}${w.key}-reset`));
      if (Number.isFinite(utilization) && utilization >= stopAtUtilization && at !== undefined && at > now)
        over.push({ window: w.name, utilization, resetAt: Math.min(at, now + MAX_HOLD_MS) });
    }
    for (const w of codex) {
      if (w.at && w.at.used >= stopAtUtilization && w.at.resetAt > now)
        over.push({ window: w.name, utilization: w.at.used, resetAt: Math.min(w.at.resetAt, now + MAX_HOLD_MS) });
    }
  }
  return { rejected, resetAt, window, over };
}

export interface AccountLimitsOptions {
  /** Headroom: stop promoting above this utilization of a window (0..1); null = off. */
  stopAtUtilization: number | null;
  log?: (message: string, fields: Record<string, unknown>) => void;
  /** The hold or the headroom changed: the queued tickets' `promotion_held_until` with it. */
  onChange?: () => void;
}

/** The account's hold and headroom, read from memory, written through to the store. */
export class AccountLimits {
  private state: AccountLimitState;
  /** Each answer's share of the account's windows (docs/flows.md#capacity-and-cost). */
  readonly windows = new WindowShareMeter();

  constructor(
    private readonly store: AccountLimitStore,
    private readonly options: AccountLimitsOptions,
  ) {
    this.state = { ...EMPTY, ...(store.load() ?? {}) };
  }

  /** Until when the account is held (model requests get 3105), or null. */
  heldUntil(now: number): number | null {
    return this.state.heldUntil !== null && this.state.heldUntil > now ? this.state.heldUntil : null;
  }

  /** Until when no ticket may be promoted (a hold, or the headroom), or null. */
  promotionBlockedUntil(now: number): number | null {
    const at = Math.max(this.state.heldUntil ?? 0, this.state.promoteAfter ?? 0);
    return at > now ? at : null;
  }

  /** The 3105 a model request of the account gets while it is held, or undefined. */
  heldError(now: number): GatewayHttpError | undefined {
    const until = this.heldUntil(now);
    if (until === null) return undefined;
    return errors.usageLimited(
      `the account's usage limit is reached (${this.state.heldWindow ?? 'unified'} window); requests wait until ${new Date(until).toISOString()}`,
      until,
      now,
    );
  }

  /**
   * One upstream answer's headers: a rejected one records (or extends) the hold and returns the
   * 3105 to answer instead of it; any answer may set the headroom. Synchronous: the embedded stores
   * write at once, so the hold is on disk before the answer leaves.
   */
  observe(status: number, headers: http.IncomingHttpHeaders, now: number): GatewayHttpError | undefined {
    const reading = readUsageLimit(status, headers, now, this.options.stopAtUtilization);
    let next = this.state;
    if (reading.rejected && reading.resetAt !== null) {
      const current = this.heldUntil(now);
      // The latest reset wins: a second window's refusal never shortens the hold.
      if (current === null || reading.resetAt > current) {
        next = { ...next, heldUntil: reading.resetAt, heldSince: current === null ? now : next.heldSince, heldWindow: reading.window };
      }
    }
    for (const over of reading.over) {
      if ((next.promoteAfter ?? 0) < over.resetAt) next = { ...next, promoteAfter: over.resetAt };
    }
    if (next !== this.state) {
      this.state = next;
      this.store.save(next);
      this.options.log?.('account usage limit', { held_until: next.heldUntil, window: next.heldWindow, promote_after: next.promoteAfter });
      this.options.onChange?.();
    }
    return reading.rejected ? this.heldError(now) : undefined;
  }
}

/**
 * The admission checks of a model request while limits are on: a ticket that cannot go on still
 * gets its own answer (3102), any other request of a held account gets the hold's 3105.
 */
export async function admissibleUnlessHeld(
  limits: AccountLimits | undefined,
  now: number,
  admissible: () => Promise<unknown>,
): Promise<void> {
  const held = limits?.heldError(now);
  try {
    await admissible();
  } catch (error) {
    if (held && (error as Partial<GatewayHttpError>).code !== BusinessCode.TicketInvalid) throw held;
    throw error;
  }
  if (held) throw held;
}

/** `offPeak.personal.stopAtUtilization` as the gateway takes it: a number 0..1, else null (off). */
export function stopAtUtilizationSetting(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1 ? value : null;
}

/**
 * What personal mode's local gateway runs with (docs/flows.md#usage-limits): account limits on, the
 * headroom from the machine setting. Spread into its configuration.
 */
export function personalAccountLimits(stopAtUtilization: unknown): Pick<GatewayConfig, 'accountLimits' | 'stopAtUtilization'> {
  return { accountLimits: true, stopAtUtilization: stopAtUtilizationSetting(stopAtUtilization) };
}

/** The account's limits when the configuration turns them on, kept in `store`; else undefined. */
export function openAccountLimits(
  config: Pick<GatewayConfig, 'accountLimits' | 'stopAtUtilization'>,
  store: TicketStore,
  log: Logger,
  onChange?: () => void,
): AccountLimits | undefined {
  if (!config.accountLimits) return undefined;
  const kept = store.accountLimitStore?.();
  if (!kept) throw new Error('--account-limits: this ticket store cannot keep a usage-limit hold (use --store sqlite or memory)');
  return new AccountLimits(kept, {
    stopAtUtilization: config.stopAtUtilization,
    log: (message, fields) => log.warn(message, fields),
    onChange,
  });
}
