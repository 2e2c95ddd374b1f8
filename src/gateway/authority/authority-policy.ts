// The ticket authority's rules (capacity, quotas, lifetimes, poll hints, who may take) and the
// off-peak windows, as the gateway configuration sets them.
import type { GatewayConfig } from '../config/schema';
import type { GatewayUser } from '../http/auth';
import { OffPeakWindows, parseDailyRange, type WindowSpec } from './windows';

export interface AuthorityPolicy {
  /** Tickets that may be ready or active at once (global segment capacity). */
  segmentCapacity: number;
  /** Model requests forwarded upstream at once (all instances on one store together). */
  maxConcurrentModelRequests: number;
  /** One user's model requests forwarded upstream at once (all instances together). */
  maxModelRequestsPerUser: number;
  /** Tickets one user may take per rolling quota window. */
  takesPerWindow: number;
  quotaWindowMs: number;
  /** Queued + ready + active tickets one user may hold. */
  maxLiveTicketsPerUser: number;
  /** A ready ticket unused this long expires. */
  readyTtlMs: number;
  /** The segment length from the first admitted model request (about 3 h in production). */
  activeWindowMs: number;
  /** A new ticket stays queued at least this long (demo pacing; 0 in production). */
  queueHoldMs?: number;
  /** A ready ticket's model requests get 3105 for this long after its first one (demo pacing). */
  admissionHoldMs?: number;
  /** Poll hint for queued tickets while the windows are open. */
  queuedPollMs: number;
  /** Longest poll hint / Retry-After the gateway gives. */
  maxPollMs: number;
  /** Retry-After for a 3105 caused by no model-request capacity right now. */
  busyRetryAfterMs: number;
  /** Expired/settled tickets are deleted this long after they ended (0 = keep forever). */
  retentionMs: number;
  eligiblePlans: readonly string[];
  exposureEnabled: boolean;
  upgradeHint: string | null;
  upgradeUrl: string | null;
  models: readonly { id: string; display_name: string }[];
  defaultModel: string | null;
}

/** The authority's rules from the gateway configuration. */
export function authorityPolicy(c: GatewayConfig): AuthorityPolicy {
  return {
    segmentCapacity: c.segmentCapacity,
    maxConcurrentModelRequests: c.maxConcurrentModelRequests,
    maxModelRequestsPerUser: c.maxModelRequestsPerUser,
    takesPerWindow: c.takesPerWindow,
    quotaWindowMs: c.quotaWindowMs,
    maxLiveTicketsPerUser: c.maxLiveTicketsPerUser,
    readyTtlMs: c.readyTtlMs,
    activeWindowMs: c.activeWindowMs,
    queueHoldMs: c.queueHoldMs,
    admissionHoldMs: c.admissionHoldMs,
    queuedPollMs: c.queuedPollMs,
    maxPollMs: c.maxPollMs,
    busyRetryAfterMs: c.busyRetryAfterMs,
    retentionMs: c.retentionMs,
    eligiblePlans: c.eligiblePlans,
    exposureEnabled: c.exposure,
    upgradeHint: c.upgradeHint,
    upgradeUrl: c.upgradeUrl,
    models: c.models,
    defaultModel: c.defaultModel,
  };
}

/** Whether the user's plan includes off-peak tasks. */
export function isEligible(policy: AuthorityPolicy, user: GatewayUser): boolean {
  return policy.eligiblePlans.includes(user.plan);
}

/** Whether the feature is rolled out to the user (the gray-release switch and the user's own). */
export function isExposed(policy: AuthorityPolicy, user: GatewayUser): boolean {
  return policy.exposureEnabled && user.exposure;
}

export function windowsFromConfig(config: GatewayConfig): OffPeakWindows {
  let spec: WindowSpec;
  if (config.windowsClosed) spec = { kind: 'never' };
  else if (config.alwaysOpen) spec = { kind: 'always' };
  else if (config.offPeak.length > 0) spec = { kind: 'inside', ranges: config.offPeak.map(parseDailyRange) };
  else spec = { kind: 'outside', ranges: config.peak.map(parseDailyRange) };
  return new OffPeakWindows(config.timeZone, spec);
}
