// Personal mode's settings (docs/architecture.md#personal-mode) and the gateway configuration of
// the local authority they make: when tasks run (`offPeak.personal.hours`), which model API
// (`offPeak.personal.baseUrl`) and which machine-local key the windows show it.
import { createHash } from 'node:crypto';
import { checkedListItems } from '../core/setting-list';
import type { GatewayConfig } from '../gateway/config';
import { OffPeakWindows, parseDailyRange } from '../gateway/authority/windows';
import { personalAccountLimits } from '../gateway/model/account-limit';
import { isLiteralLoopback } from '../core/loopback-host';

export type OffPeakMode = 'personal' | 'gateway';

/** `offPeak.mode` as set ('' or absent: personal while no gateway URL is set, else gateway). */
export function resolveMode(setting: string | undefined, gatewayUrl: string): OffPeakMode {
  if (setting === 'personal' || setting === 'gateway') return setting;
  return gatewayUrl.trim() === '' ? 'personal' : 'gateway';
}

export class PersonalSettingError extends Error {}

/**
 * `offPeak.personal.hours`: `always` (or empty), or daily ranges in the local time zone,
 * comma-separated, e.g. `01:00-07:00` or `22:00-02:00, 12:00-13:00` (a range may wrap midnight).
 * Throws PersonalSettingError with a message fit for the user on anything else.
 */
export function parsePersonalHours(text: string): { alwaysOpen: true } | { offPeak: string[] } {
  const trimmed = text.trim();
  if (trimmed === '' || /^always$/i.test(trimmed)) return { alwaysOpen: true };
  const ranges = checkedListItems(
    trimmed,
    parseDailyRange,
    (message) => new PersonalSettingError(`offPeak.personal.hours: ${message} (or "always")`),
  );
  return { offPeak: ranges.map((r) => r.replace(/\s+/g, '')) };
}

/**
 * When `offPeak.personal.hours` next open after `now`, by the same windows the local authority
 * uses: null while they are open (or `always`); undefined for hours that do not parse.
 */
export function hoursNextOpening(hours: string, now: number, timeZone: string = localTimeZone()): number | null | undefined {
  let parsed: ReturnType<typeof parsePersonalHours>;
  try {
    parsed = parsePersonalHours(hours);
  } catch {
    return undefined;
  }
  if ('alwaysOpen' in parsed) return null;
  const windows = new OffPeakWindows(timeZone, { kind: 'inside', ranges: parsed.offPeak.map(parseDailyRange) });
  return windows.isOpen(now) ? null : windows.nextOpenAt(now);
}

/** The machine's IANA time zone (what "local time" means for the hours). */
export function localTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

export const DEFAULT_MODEL_BASE_URL = 'https://api.anthropic.com';

/**
 * `offPeak.personal.baseUrl`: an https URL, or http to a literal loopback address only (the model
 * key or the Claude login it carries would travel in clear; `isLiteralLoopback` says why not
 * `localhost`); no credentials in it.
 */
export function parseModelBaseUrl(text: string | undefined): string {
  const value = (text ?? '').trim() || DEFAULT_MODEL_BASE_URL;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new PersonalSettingError(`offPeak.personal.baseUrl: "${value}" is not a URL (e.g. ${DEFAULT_MODEL_BASE_URL})`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new PersonalSettingError('offPeak.personal.baseUrl: use an http(s) URL');
  if (url.protocol === 'http:' && !isLiteralLoopback(url.hostname)) {
    throw new PersonalSettingError(
      'offPeak.personal.baseUrl: use https (plain http:// only to a loopback address of this machine, http://127.0.0.1:<port> or http://[::1]:<port>, not localhost): your model key or login would travel in clear or to another user',
    );
  }
  if (url.username || url.password)
    throw new PersonalSettingError(
      'offPeak.personal.baseUrl: no user name or password in the URL (the key is set with "Off-Peak: Set Model API Key…")',
    );
  return url.href.replace(/\/+$/, '');
}

/** The one user of a local authority. */
export const PERSONAL_USER_ID = 'personal';

export interface PersonalGatewayInputs {
  /** The machine-local key the windows authenticate with (not a model key). */
  localKey: string;
  port: number;
  hours: string;
  modelBaseUrl: string;
  /** Where Codex's OpenAI Responses requests go (its own login passes through; default OpenAI's API). */
  openaiBaseUrl?: string;
  timeZone?: string;
  /** `offPeak.personal.stopAtUtilization` (0..1 or unset): the headroom of docs/flows.md#usage-limits. */
  stopAtUtilization?: unknown;
}

/** OpenAI's API, where the local authority sends Codex's Responses requests (docs/flows.md#personal-mode). */
export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com';

/**
 * The local authority's gateway settings: loopback only, one user, the reference gateway's rules
 * with personal limits, the windows from the hours. The model key is not in it: the authority
 * reads it from SecretStorage at each model request (or passes the agent's own login through).
 */
export function personalGatewayConfig(inputs: PersonalGatewayInputs): Partial<GatewayConfig> {
  const config: Partial<GatewayConfig> = {
    host: '127.0.0.1',
    port: inputs.port,
    store: 'sqlite',
    timeZone: inputs.timeZone ?? localTimeZone(),
    ...parsePersonalHours(inputs.hours),
    users: [{ id: PERSONAL_USER_ID, apiKeySha256: createHash('sha256').update(inputs.localKey).digest('hex') }],
    upstreamUrl: inputs.modelBaseUrl,
    upstreamAuth: 'x-api-key',
    openaiUpstreamUrl: inputs.openaiBaseUrl ?? DEFAULT_OPENAI_BASE_URL,
    passClientCredential: true,
    // One person's tasks: every one of them may hold a ticket, a few run at once.
    maxLiveTicketsPerUser: 100,
    takesPerWindow: 1000,
    segmentCapacity: 4,
    promoteIntervalMs: 500,
    queuedPollMs: 5_000,
    logLevel: 'silent',
    // No model list of its own: the agent's model goes upstream as asked.
    models: [],
  };
  // A reached usage limit holds the account's requests and promotions until its reset (docs/flows.md#usage-limits).
  return { ...config, ...personalAccountLimits(inputs.stopAtUtilization ?? null) };
}
