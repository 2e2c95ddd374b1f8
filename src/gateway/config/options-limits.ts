// The options table, part two: the limits and time limits (model concurrency, quotas, poll hints,
// long-polls, retention, request bodies, connections, shutdown grace).
import type { OptionSpec } from './schema';

export const OPTIONS_LIMITS: OptionSpec[] = [
  {
    key: 'maxConcurrentModelRequests',
    flag: '--max-model-concurrency',
    env: 'OFFPEAK_GATEWAY_MAX_MODEL_CONCURRENCY',
    type: 'int',
    description: 'Model requests forwarded upstream at once; more get 429/3105.',
  },
  {
    key: 'maxModelRequestsPerUser',
    flag: '--max-model-concurrency-per-user',
    env: 'OFFPEAK_GATEWAY_MAX_MODEL_CONCURRENCY_PER_USER',
    type: 'int',
    description: "One user's model requests forwarded at once; more get 429/3105 (others are still admitted).",
  },
  {
    key: 'takesPerWindow',
    flag: '--quota-takes',
    env: 'OFFPEAK_GATEWAY_QUOTA_TAKES',
    type: 'int',
    description: 'Tickets per user per rolling quota window (3103 beyond).',
  },
  {
    key: 'quotaWindowMs',
    flag: '--quota-window-ms',
    env: 'OFFPEAK_GATEWAY_QUOTA_WINDOW_MS',
    type: 'int',
    description: 'Rolling quota window.',
  },
  {
    key: 'maxLiveTicketsPerUser',
    flag: '--max-live-tickets',
    env: 'OFFPEAK_GATEWAY_MAX_LIVE_TICKETS',
    type: 'int',
    description: 'Queued + ready + active tickets per user (3103 beyond).',
  },
  {
    key: 'queuedPollMs',
    flag: '--queued-poll-ms',
    env: 'OFFPEAK_GATEWAY_QUEUED_POLL_MS',
    type: 'int',
    description: 'Poll hint / Retry-After for queued tickets while windows are open.',
  },
  {
    key: 'maxPollMs',
    flag: '--max-poll-ms',
    env: 'OFFPEAK_GATEWAY_MAX_POLL_MS',
    type: 'int',
    description: 'Longest poll hint / Retry-After given.',
  },
  {
    key: 'busyRetryAfterMs',
    flag: '--busy-retry-after-ms',
    env: 'OFFPEAK_GATEWAY_BUSY_RETRY_AFTER_MS',
    type: 'int',
    description: 'Retry-After of a 3105 caused by model concurrency.',
  },
  {
    key: 'statusMaxWaitMs',
    flag: '--status-max-wait-ms',
    env: 'OFFPEAK_GATEWAY_STATUS_MAX_WAIT_MS',
    type: 'int',
    description: 'Cap on a status long-poll (wait_ms).',
  },
  {
    key: 'maxLongPollsPerUser',
    flag: '--max-long-polls-per-user',
    env: 'OFFPEAK_GATEWAY_MAX_LONG_POLLS_PER_USER',
    type: 'int',
    description: 'Status long-polls one user may hold waiting; more are answered at once without waiting.',
  },
  {
    key: 'retentionMs',
    flag: '--retention-ms',
    env: 'OFFPEAK_GATEWAY_RETENTION_MS',
    type: 'int',
    description:
      'Delete expired/settled tickets this long after they ended (checked hourly; 0 = keep forever; take history inside the quota window is always kept).',
  },
  {
    key: 'maxJsonBodyBytes',
    flag: '--max-body-bytes',
    env: 'OFFPEAK_GATEWAY_MAX_BODY_BYTES',
    type: 'int',
    description: 'Largest ticket-API request body (413 beyond).',
  },
  {
    key: 'maxModelBodyBytes',
    flag: '--max-model-body-bytes',
    env: 'OFFPEAK_GATEWAY_MAX_MODEL_BODY_BYTES',
    type: 'int',
    description: 'Largest model request body (413 beyond).',
  },
  {
    key: 'bodyReadTimeoutMs',
    flag: '--body-read-timeout-ms',
    env: 'OFFPEAK_GATEWAY_BODY_READ_TIMEOUT_MS',
    type: 'int',
    description:
      'A request body not fully received this long after its headers is cut with 408 (a model request takes its slot only after its body is in).',
  },
  {
    key: 'maxConnections',
    flag: '--max-connections',
    env: 'OFFPEAK_GATEWAY_MAX_CONNECTIONS',
    type: 'int',
    description: 'Open client connections at once (all users); connections beyond are closed unanswered.',
  },
  {
    key: 'headersTimeoutMs',
    flag: '--headers-timeout-ms',
    env: 'OFFPEAK_GATEWAY_HEADERS_TIMEOUT_MS',
    type: 'int',
    description:
      "A connection that has not sent a request's complete headers this long (from its opening, or from its previous answer) is closed.",
  },
  {
    key: 'maxUnauthenticatedPerAddress',
    flag: '--max-unauthenticated-per-address',
    env: 'OFFPEAK_GATEWAY_MAX_UNAUTHENTICATED_PER_ADDRESS',
    type: 'int',
    description:
      'Connections one client address may hold open that have not shown a valid API key (or the ops token) yet; more are closed unanswered (a burst of new connections from one client counts in full until their first requests).',
  },
  {
    key: 'shutdownGraceMs',
    flag: '--shutdown-grace-ms',
    env: 'OFFPEAK_GATEWAY_SHUTDOWN_GRACE_MS',
    type: 'int',
    description: 'On SIGTERM/SIGINT, how long in-flight requests may finish.',
  },
];
