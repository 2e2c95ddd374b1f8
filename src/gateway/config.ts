// Gateway configuration: defaults < demo presets < JSON config file < environment < command-line
// flags. One table (GATEWAY_OPTIONS) drives the flags, the env names, --help and docs/gateway.md.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { OffPeakWindows, parseDailyRange } from './authority/windows';

export const UserConfigSchema = z
  .object({
    id: z.string().min(1),
    /** Plain API key (fine for demos and tests); prefer apiKeySha256 in files you keep. */
    apiKey: z.string().min(8).optional(),
    /** Hex SHA-256 of the API key. */
    apiKeySha256: z.string().regex(/^[0-9a-f]{64}$/i).optional(),
    plan: z.string().min(1).optional(),
    exposure: z.boolean().optional(),
  })
  .refine((u) => Boolean(u.apiKey) !== Boolean(u.apiKeySha256), { message: 'give exactly one of apiKey or apiKeySha256' });
export type UserConfig = z.infer<typeof UserConfigSchema>;

export const ModelConfigSchema = z.object({ id: z.string().min(1), display_name: z.string().min(1) });

const nonNegativeInt = z.number().int().min(0);
const positiveInt = z.number().int().min(1);

export const GatewayConfigSchema = z.object({
  host: z.string().min(1),
  port: z.number().int().min(0).max(65535),
  store: z.enum(['sqlite', 'memory', 'mysql']),
  db: z.string().min(1),
  mysqlUrl: z.string().min(1).nullable(),
  mysqlPassword: z.string().nullable(),
  mysqlPoolSize: positiveInt,
  demo: z.boolean(),
  demoKey: z.string().min(8),
  demoScript: z.enum(['work', 'echo']),
  demoStepMs: nonNegativeInt,
  queueHoldMs: nonNegativeInt,
  admissionHoldMs: nonNegativeInt,
  timeZone: z.string().min(1),
  peak: z.array(z.string()),
  offPeak: z.array(z.string()),
  alwaysOpen: z.boolean(),
  windowsClosed: z.boolean(),
  promoteIntervalMs: nonNegativeInt,
  readyTtlMs: positiveInt,
  activeWindowMs: positiveInt,
  segmentCapacity: nonNegativeInt,
  maxConcurrentModelRequests: positiveInt,
  takesPerWindow: nonNegativeInt,
  quotaWindowMs: positiveInt,
  maxLiveTicketsPerUser: positiveInt,
  queuedPollMs: positiveInt,
  maxPollMs: positiveInt,
  busyRetryAfterMs: positiveInt,
  statusMaxWaitMs: nonNegativeInt,
  retentionMs: nonNegativeInt,
  maxJsonBodyBytes: positiveInt,
  maxModelBodyBytes: positiveInt,
  bodyReadTimeoutMs: positiveInt,
  maxConnections: positiveInt,
  headersTimeoutMs: positiveInt,
  maxUnauthenticatedPerAddress: positiveInt,
  maxLongPollsPerUser: positiveInt,
  maxModelRequestsPerUser: positiveInt,
  shutdownGraceMs: nonNegativeInt,
  upstreamUrl: z.string().url().nullable(),
  upstreamApiKey: z.string().min(1).nullable(),
  upstreamAuth: z.enum(['x-api-key', 'bearer']),
  upstreamTimeoutMs: positiveInt,
  passClientCredential: z.boolean(),
  exposure: z.boolean(),
  eligiblePlans: z.array(z.string().min(1)),
  upgradeHint: z.string().nullable(),
  upgradeUrl: z.string().nullable(),
  models: z.array(ModelConfigSchema),
  defaultModel: z.string().nullable(),
  unknownModel: z.enum(['default', 'reject']),
  opsToken: z.string().min(16).nullable(),
  opsListen: z.string().min(1).nullable(),
  users: z.array(UserConfigSchema),
  logLevel: z.enum(['debug', 'info', 'warn', 'error', 'silent']),
  testHooks: z.boolean(),
  accountLimits: z.boolean(),
  stopAtUtilization: z.number().min(0).max(1).nullable(),
});
export type GatewayConfig = z.infer<typeof GatewayConfigSchema>;

export const DEFAULT_CONFIG: GatewayConfig = {
  host: '127.0.0.1',
  port: 8787,
  store: 'sqlite',
  db: 'offpeak-gateway.sqlite',
  mysqlUrl: null,
  mysqlPassword: null,
  mysqlPoolSize: 10,
  demo: false,
  demoKey: 'opk-demo-key-0000',
  demoScript: 'work',
  demoStepMs: 5_000,
  queueHoldMs: 0,
  admissionHoldMs: 0,
  timeZone: 'Asia/Shanghai',
  peak: ['14:00-18:00'],
  offPeak: [],
  alwaysOpen: false,
  windowsClosed: false,
  promoteIntervalMs: 1000,
  readyTtlMs: 30 * 60_000,
  activeWindowMs: 3 * 3_600_000,
  segmentCapacity: 4,
  maxConcurrentModelRequests: 16,
  takesPerWindow: 30,
  quotaWindowMs: 24 * 3_600_000,
  maxLiveTicketsPerUser: 10,
  queuedPollMs: 15_000,
  maxPollMs: 300_000,
  busyRetryAfterMs: 2000,
  statusMaxWaitMs: 30_000,
  retentionMs: 30 * 24 * 3_600_000,
  maxJsonBodyBytes: 64 * 1024,
  maxModelBodyBytes: 32 * 1024 * 1024,
  bodyReadTimeoutMs: 30_000,
  maxConnections: 1024,
  headersTimeoutMs: 10_000,
  maxUnauthenticatedPerAddress: 128,
  maxLongPollsPerUser: 8,
  maxModelRequestsPerUser: 4,
  shutdownGraceMs: 10_000,
  upstreamUrl: null,
  upstreamApiKey: null,
  upstreamAuth: 'x-api-key',
  upstreamTimeoutMs: 600_000,
  passClientCredential: false,
  exposure: true,
  eligiblePlans: ['coding'],
  upgradeHint: 'Off-peak tasks are part of the Coding plan: upgrade to queue tasks for off-peak hours.',
  upgradeUrl: null,
  models: [
    { id: 'claude-sonnet-4-5', display_name: 'Claude Sonnet 4.5' },
    { id: 'claude-opus-4-1', display_name: 'Claude Opus 4.1' },
    { id: 'claude-haiku-4-5', display_name: 'Claude Haiku 4.5' },
  ],
  defaultModel: null,
  unknownModel: 'default',
  opsToken: null,
  opsListen: null,
  users: [],
  logLevel: 'info',
  testHooks: false,
  accountLimits: false,
  stopAtUtilization: null,
};

type OptionType = 'string' | 'int' | 'bool' | 'list' | 'users' | 'models' | 'nullable-string' | 'nullable-fraction';

export interface OptionSpec {
  key: keyof GatewayConfig | 'config';
  flag: string;
  env: string;
  type: OptionType;
  description: string;
}

/** Every option; flag `--x`, env `OFFPEAK_GATEWAY_X` (the upstream key has its own env name). */
export const GATEWAY_OPTIONS: OptionSpec[] = [
  { key: 'config', flag: '--config', env: 'OFFPEAK_GATEWAY_CONFIG', type: 'string', description: 'JSON config file (keys as in this table, camelCase; users as objects).' },
  { key: 'host', flag: '--host', env: 'OFFPEAK_GATEWAY_HOST', type: 'string', description: 'Interface to listen on.' },
  { key: 'port', flag: '--port', env: 'OFFPEAK_GATEWAY_PORT', type: 'int', description: 'Port (0 = any free port; the real one is printed).' },
  { key: 'store', flag: '--store', env: 'OFFPEAK_GATEWAY_STORE', type: 'string', description: 'sqlite (durable, default), memory (lost on exit; the demo default) or mysql (MySQL 8 / MariaDB 10.6+, shared by several gateway instances).' },
  { key: 'db', flag: '--db', env: 'OFFPEAK_GATEWAY_DB', type: 'string', description: 'SQLite file (WAL mode, locked exclusively by one gateway).' },
  { key: 'mysqlUrl', flag: '--mysql-url', env: 'OFFPEAK_GATEWAY_MYSQL_URL', type: 'nullable-string', description: 'With --store mysql: mysql://user@host:port/database (no password in it).' },
  { key: 'mysqlPassword', flag: '', env: 'OFFPEAK_GATEWAY_MYSQL_PASSWORD', type: 'nullable-string', description: 'MySQL password: environment (or config file) only, never a flag.' },
  { key: 'mysqlPoolSize', flag: '--mysql-pool-size', env: 'OFFPEAK_GATEWAY_MYSQL_POOL_SIZE', type: 'int', description: 'MySQL connections per gateway instance.' },
  { key: 'demo', flag: '--demo', env: 'OFFPEAK_GATEWAY_DEMO', type: 'bool', description: 'Demo mode: windows always open, a demo user, memory store, and a scripted DEMO model when no upstream URL + key are set.' },
  { key: 'demoKey', flag: '--demo-key', env: 'OFFPEAK_GATEWAY_DEMO_KEY', type: 'string', description: "The demo user's API key." },
  { key: 'demoScript', flag: '--demo-script', env: 'OFFPEAK_GATEWAY_DEMO_SCRIPT', type: 'string', description: "What the DEMO model does: work (drives the agent's tools: reads the workspace, runs node --version, writes a file; paced, with a short first segment) or echo (answers at once)." },
  { key: 'demoStepMs', flag: '--demo-step-ms', env: 'OFFPEAK_GATEWAY_DEMO_STEP_MS', type: 'int', description: 'DEMO model: pause before each scripted reply, so a person can follow the agent.' },
  { key: 'queueHoldMs', flag: '--queue-hold-ms', env: 'OFFPEAK_GATEWAY_QUEUE_HOLD_MS', type: 'int', description: 'A new ticket stays queued at least this long (demo pacing; the working DEMO model sets 15000).' },
  { key: 'admissionHoldMs', flag: '--admission-hold-ms', env: 'OFFPEAK_GATEWAY_ADMISSION_HOLD_MS', type: 'int', description: "A ready ticket's model requests get 429/3105 for this long from its first one (demo pacing; the working DEMO model sets 10000)." },
  { key: 'timeZone', flag: '--time-zone', env: 'OFFPEAK_GATEWAY_TIME_ZONE', type: 'string', description: 'IANA time zone of the windows.' },
  { key: 'peak', flag: '--peak', env: 'OFFPEAK_GATEWAY_PEAK', type: 'list', description: 'Peak hours HH:MM-HH:MM (comma-separated or repeated); off-peak is outside them.' },
  { key: 'offPeak', flag: '--off-peak', env: 'OFFPEAK_GATEWAY_OFF_PEAK', type: 'list', description: 'Off-peak hours HH:MM-HH:MM instead of --peak (off-peak is inside them).' },
  { key: 'alwaysOpen', flag: '--always-open', env: 'OFFPEAK_GATEWAY_ALWAYS_OPEN', type: 'bool', description: 'Windows always open.' },
  { key: 'windowsClosed', flag: '--windows-closed', env: 'OFFPEAK_GATEWAY_WINDOWS_CLOSED', type: 'bool', description: 'Windows never open (nothing is promoted; maintenance).' },
  { key: 'promoteIntervalMs', flag: '--promote-interval-ms', env: 'OFFPEAK_GATEWAY_PROMOTE_INTERVAL_MS', type: 'int', description: 'Promote timer period (0 = no timer; ticks only via test hooks).' },
  { key: 'readyTtlMs', flag: '--ready-ttl-ms', env: 'OFFPEAK_GATEWAY_READY_TTL_MS', type: 'int', description: 'A ready ticket unused this long expires.' },
  { key: 'activeWindowMs', flag: '--active-window-ms', env: 'OFFPEAK_GATEWAY_ACTIVE_WINDOW_MS', type: 'int', description: 'Segment length from the first admitted model request.' },
  { key: 'segmentCapacity', flag: '--segment-capacity', env: 'OFFPEAK_GATEWAY_SEGMENT_CAPACITY', type: 'int', description: 'Tickets that may be ready or active at once (all users).' },
  { key: 'maxConcurrentModelRequests', flag: '--max-model-concurrency', env: 'OFFPEAK_GATEWAY_MAX_MODEL_CONCURRENCY', type: 'int', description: 'Model requests forwarded upstream at once; more get 429/3105.' },
  { key: 'maxModelRequestsPerUser', flag: '--max-model-concurrency-per-user', env: 'OFFPEAK_GATEWAY_MAX_MODEL_CONCURRENCY_PER_USER', type: 'int', description: "One user's model requests forwarded at once; more get 429/3105 (others are still admitted)." },
  { key: 'takesPerWindow', flag: '--quota-takes', env: 'OFFPEAK_GATEWAY_QUOTA_TAKES', type: 'int', description: 'Tickets per user per rolling quota window (3103 beyond).' },
  { key: 'quotaWindowMs', flag: '--quota-window-ms', env: 'OFFPEAK_GATEWAY_QUOTA_WINDOW_MS', type: 'int', description: 'Rolling quota window.' },
  { key: 'maxLiveTicketsPerUser', flag: '--max-live-tickets', env: 'OFFPEAK_GATEWAY_MAX_LIVE_TICKETS', type: 'int', description: 'Queued + ready + active tickets per user (3103 beyond).' },
  { key: 'queuedPollMs', flag: '--queued-poll-ms', env: 'OFFPEAK_GATEWAY_QUEUED_POLL_MS', type: 'int', description: 'Poll hint / Retry-After for queued tickets while windows are open.' },
  { key: 'maxPollMs', flag: '--max-poll-ms', env: 'OFFPEAK_GATEWAY_MAX_POLL_MS', type: 'int', description: 'Longest poll hint / Retry-After given.' },
  { key: 'busyRetryAfterMs', flag: '--busy-retry-after-ms', env: 'OFFPEAK_GATEWAY_BUSY_RETRY_AFTER_MS', type: 'int', description: 'Retry-After of a 3105 caused by model concurrency.' },
  { key: 'statusMaxWaitMs', flag: '--status-max-wait-ms', env: 'OFFPEAK_GATEWAY_STATUS_MAX_WAIT_MS', type: 'int', description: 'Cap on a status long-poll (wait_ms).' },
  { key: 'maxLongPollsPerUser', flag: '--max-long-polls-per-user', env: 'OFFPEAK_GATEWAY_MAX_LONG_POLLS_PER_USER', type: 'int', description: "Status long-polls one user may hold waiting; more are answered at once without waiting." },
  { key: 'retentionMs', flag: '--retention-ms', env: 'OFFPEAK_GATEWAY_RETENTION_MS', type: 'int', description: 'Delete expired/settled tickets this long after they ended (checked hourly; 0 = keep forever; take history inside the quota window is always kept).' },
  { key: 'maxJsonBodyBytes', flag: '--max-body-bytes', env: 'OFFPEAK_GATEWAY_MAX_BODY_BYTES', type: 'int', description: 'Largest ticket-API request body (413 beyond).' },
  { key: 'maxModelBodyBytes', flag: '--max-model-body-bytes', env: 'OFFPEAK_GATEWAY_MAX_MODEL_BODY_BYTES', type: 'int', description: 'Largest model request body (413 beyond).' },
  { key: 'bodyReadTimeoutMs', flag: '--body-read-timeout-ms', env: 'OFFPEAK_GATEWAY_BODY_READ_TIMEOUT_MS', type: 'int', description: 'A request body not fully received this long after its headers is cut with 408 (a model request takes its slot only after its body is in).' },
  { key: 'maxConnections', flag: '--max-connections', env: 'OFFPEAK_GATEWAY_MAX_CONNECTIONS', type: 'int', description: 'Open client connections at once (all users); connections beyond are closed unanswered.' },
  { key: 'headersTimeoutMs', flag: '--headers-timeout-ms', env: 'OFFPEAK_GATEWAY_HEADERS_TIMEOUT_MS', type: 'int', description: "A connection that has not sent a request's complete headers this long (from its opening, or from its previous answer) is closed." },
  { key: 'maxUnauthenticatedPerAddress', flag: '--max-unauthenticated-per-address', env: 'OFFPEAK_GATEWAY_MAX_UNAUTHENTICATED_PER_ADDRESS', type: 'int', description: 'Connections one client address may hold open that have not shown a valid API key (or the ops token) yet; more are closed unanswered (a burst of new connections from one client counts in full until their first requests).' },
  { key: 'shutdownGraceMs', flag: '--shutdown-grace-ms', env: 'OFFPEAK_GATEWAY_SHUTDOWN_GRACE_MS', type: 'int', description: 'On SIGTERM/SIGINT, how long in-flight requests may finish.' },
  { key: 'upstreamUrl', flag: '--upstream-url', env: 'OFFPEAK_GATEWAY_UPSTREAM_URL', type: 'nullable-string', description: 'Anthropic-compatible API base (e.g. https://api.anthropic.com).' },
  { key: 'upstreamApiKey', flag: '', env: 'OFFPEAK_UPSTREAM_API_KEY', type: 'nullable-string', description: 'Upstream API key: environment (or config file) only, never a flag.' },
  { key: 'passClientCredential', flag: '--pass-client-credential', env: 'OFFPEAK_GATEWAY_PASS_CLIENT_CREDENTIAL', type: 'bool', description: "A model request authenticated with x-offpeak-key goes upstream with the client's own Authorization / x-api-key (e.g. a Claude Code login) instead of the gateway's key; neither is stored or logged. Personal mode's local authority sets it." },
  { key: 'upstreamAuth', flag: '--upstream-auth', env: 'OFFPEAK_GATEWAY_UPSTREAM_AUTH', type: 'string', description: 'How the key is sent upstream: x-api-key (Anthropic) or bearer.' },
  { key: 'upstreamTimeoutMs', flag: '--upstream-timeout-ms', env: 'OFFPEAK_GATEWAY_UPSTREAM_TIMEOUT_MS', type: 'int', description: 'Upstream socket idle timeout.' },
  { key: 'exposure', flag: '--exposure', env: 'OFFPEAK_GATEWAY_EXPOSURE', type: 'bool', description: 'Feature exposed (gray release switch for all users).' },
  { key: 'eligiblePlans', flag: '--eligible-plans', env: 'OFFPEAK_GATEWAY_ELIGIBLE_PLANS', type: 'list', description: 'Plans that may take tickets (others get 3101).' },
  { key: 'upgradeHint', flag: '--upgrade-hint', env: 'OFFPEAK_GATEWAY_UPGRADE_HINT', type: 'nullable-string', description: 'Shown to users whose plan is not eligible.' },
  { key: 'upgradeUrl', flag: '--upgrade-url', env: 'OFFPEAK_GATEWAY_UPGRADE_URL', type: 'nullable-string', description: 'Upgrade link for them.' },
  { key: 'models', flag: '--models', env: 'OFFPEAK_GATEWAY_MODELS', type: 'models', description: 'Allowed models: id or id=Display Name, comma-separated.' },
  { key: 'defaultModel', flag: '--default-model', env: 'OFFPEAK_GATEWAY_DEFAULT_MODEL', type: 'nullable-string', description: 'Default model (default: the first allowed model).' },
  { key: 'unknownModel', flag: '--unknown-model', env: 'OFFPEAK_GATEWAY_UNKNOWN_MODEL', type: 'string', description: 'A model request naming a model outside --models: default (sent as the default model) or reject (400). An empty --models allows any model.' },
  { key: 'users', flag: '--user', env: 'OFFPEAK_GATEWAY_USERS', type: 'users', description: 'A user id:apiKey[:plan] (repeat the flag, or comma-separate in the env var). The flag puts keys in argv (a warning says so): prefer "users" with apiKeySha256 in the config file.' },
  { key: 'opsListen', flag: '--ops-listen', env: 'OFFPEAK_GATEWAY_OPS_LISTEN', type: 'nullable-string', description: 'host:port for /metrics and /healthz alone (then not served on the API address); port 0 = any free port.' },
  { key: 'opsToken', flag: '', env: 'OFFPEAK_GATEWAY_OPS_TOKEN', type: 'nullable-string', description: '/metrics and /healthz answer only to Authorization: Bearer <this> (16+ characters): environment (or config file) only, never a flag.' },
  { key: 'logLevel', flag: '--log-level', env: 'OFFPEAK_GATEWAY_LOG_LEVEL', type: 'string', description: 'debug, info, warn, error or silent (JSON lines on stderr).' },
  { key: 'accountLimits', flag: '--account-limits', env: 'OFFPEAK_GATEWAY_ACCOUNT_LIMITS', type: 'bool', description: "The upstream is one account (personal mode): a 429 with anthropic-ratelimit-unified-status: rejected holds every model request (3105 with the reset) and promotes nothing until the reset; the hold survives a restart (sqlite or memory store)." },
  { key: 'stopAtUtilization', flag: '--stop-at-utilization', env: 'OFFPEAK_GATEWAY_STOP_AT_UTILIZATION', type: 'nullable-fraction', description: 'With --account-limits: a reported 5-hour or 7-day utilization at or above this (0..1) promotes no new ticket until that window resets; running segments go on.' },
  { key: 'testHooks', flag: '--test-hooks', env: 'OFFPEAK_GATEWAY_TEST_HOOKS', type: 'bool', description: 'Enable POST /__test/tick and /__test/advance-clock (tests only; never in production).' },
];

export class ConfigError extends Error {}

/** `host:port` or `[v6-host]:port`, as given to --ops-listen. */
export function parseListenAddress(text: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text.trim());
  if (!match || Number(match[3]) > 65535) throw new ConfigError(`opsListen: expected host:port (e.g. 127.0.0.1:9090), got "${text}"`);
  return { host: match[1] ?? match[2], port: Number(match[3]) };
}

function parseBool(text: string, where: string): boolean {
  if (/^(1|true|yes|on)$/i.test(text)) return true;
  if (/^(0|false|no|off)$/i.test(text)) return false;
  throw new ConfigError(`${where}: expected true or false, got "${text}"`);
}

function parseUsers(text: string, where: string): UserConfig[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const [id, apiKey, plan] = entry.split(':');
      if (!id || !apiKey) throw new ConfigError(`${where}: expected id:apiKey[:plan], got "${entry}"`);
      return { id, apiKey, ...(plan ? { plan } : {}) };
    });
}

function parseModels(text: string): { id: string; display_name: string }[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const [id, name] = entry.split('=');
      return { id: id.trim(), display_name: (name ?? id).trim() };
    });
}

function convert(spec: OptionSpec, text: string, where: string, previous: unknown): unknown {
  switch (spec.type) {
    case 'string':
      return text;
    case 'nullable-string':
      return text === '' || text === 'null' ? null : text;
    case 'int': {
      if (!/^-?\d+$/.test(text.trim())) throw new ConfigError(`${where}: expected a whole number, got "${text}"`);
      return Number(text);
    }
    case 'bool':
      return parseBool(text, where);
    case 'list': {
      const items = text.split(',').map((s) => s.trim()).filter(Boolean);
      return Array.isArray(previous) ? [...(previous as string[]), ...items] : items;
    }
    case 'users': {
      const users = parseUsers(text, where);
      return Array.isArray(previous) ? [...(previous as UserConfig[]), ...users] : users;
    }
    case 'models':
      return parseModels(text);
    case 'nullable-fraction': {
      if (text === '' || text === 'null') return null;
      if (!/^\d*\.?\d+$/.test(text.trim()) || Number(text) > 1) throw new ConfigError(`${where}: expected a number from 0 to 1, got "${text}"`);
      return Number(text);
    }
  }
}

export interface ParsedCommandLine {
  config: GatewayConfig;
  help: boolean;
  version: boolean;
  /** Said on stderr at start: the configuration works but is unwise. */
  warnings: string[];
}

/** Why --user is a bad way to give keys: what main.ts prints when it is used. */
export const USER_FLAG_WARNING =
  '--user puts API keys on the command line, where every local user can read them (ps, /proc): ' +
  'put the users in the config file (--config) with "apiKeySha256", the hex SHA-256 of each key, as the README\'s deployment example does';

/**
 * Builds the configuration from argv and env (and the config file they name).
 * Throws ConfigError with a message fit for the terminal on any bad input.
 */
export function loadGatewayConfig(argv: readonly string[], env: NodeJS.ProcessEnv, readFile: (path: string) => string = (p) => readFileSync(p, 'utf8')): ParsedCommandLine {
  const fromFlags: Record<string, unknown> = {};
  let help = false;
  let version = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    if (arg === '--version') {
      version = true;
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const negated = flag.startsWith('--no-') ? `--${flag.slice(5)}` : null;
    const spec = GATEWAY_OPTIONS.find((o) => o.flag !== '' && (o.flag === flag || (negated !== null && o.flag === negated && o.type === 'bool')));
    if (!spec) throw new ConfigError(`unknown option ${flag} (see --help)`);
    let value: string;
    if (negated) value = 'false';
    else if (eq > 0) value = arg.slice(eq + 1);
    else if (spec.type === 'bool') value = argv[i + 1] !== undefined && /^(true|false)$/.test(argv[i + 1]) ? argv[++i] : 'true';
    else {
      if (argv[i + 1] === undefined) throw new ConfigError(`option ${flag} needs a value`);
      value = argv[++i];
    }
    fromFlags[spec.key] = convert(spec, value, flag, fromFlags[spec.key]);
  }

  const warnings = 'users' in fromFlags ? [USER_FLAG_WARNING] : [];
  if (help || version) return { config: { ...DEFAULT_CONFIG }, help, version, warnings };

  const fromEnv: Record<string, unknown> = {};
  for (const spec of GATEWAY_OPTIONS) {
    const text = env[spec.env];
    if (text !== undefined && text !== '') fromEnv[spec.key] = convert(spec, text, spec.env, undefined);
  }

  const configPath = (fromFlags.config ?? fromEnv.config) as string | undefined;
  let fromFile: Record<string, unknown> = {};
  if (configPath) {
    let text: string;
    try {
      text = readFile(configPath);
    } catch (error) {
      throw new ConfigError(`cannot read config file ${configPath}: ${(error as Error).message}`);
    }
    try {
      fromFile = JSON.parse(text) as Record<string, unknown>;
    } catch (error) {
      throw new ConfigError(`config file ${configPath} is not valid JSON: ${(error as Error).message}`);
    }
    if (!fromFile || typeof fromFile !== 'object' || Array.isArray(fromFile)) throw new ConfigError(`config file ${configPath} must hold a JSON object`);
    const unknown = Object.keys(fromFile).filter((k) => !(k in DEFAULT_CONFIG));
    if (unknown.length > 0) throw new ConfigError(`config file ${configPath}: unknown keys ${unknown.join(', ')}`);
  }
  delete fromFlags.config;
  delete fromEnv.config;

  const merged = { ...fromFile, ...fromEnv, ...fromFlags };
  return { config: resolveGatewayConfig(merged), help, version, warnings };
}

function hasRealUpstream(config: Partial<Pick<GatewayConfig, 'upstreamUrl' | 'upstreamApiKey'>>): boolean {
  return Boolean(config.upstreamUrl && config.upstreamApiKey);
}

/** Demo mode without a real upstream URL and key answers with the built-in DEMO model. */
export function usesDemoModel(config: Pick<GatewayConfig, 'demo' | 'upstreamUrl' | 'upstreamApiKey'>): boolean {
  return config.demo && !hasRealUpstream(config);
}

/**
 * Defaults + demo presets + the given settings, validated. Tests call this directly with the few
 * settings they care about.
 */
export function resolveGatewayConfig(settings: Partial<GatewayConfig>): GatewayConfig {
  const demo = settings.demo ?? DEFAULT_CONFIG.demo;
  const windowsGiven = ['peak', 'offPeak', 'alwaysOpen', 'windowsClosed'].some((k) => k in settings);
  const demoPresets: Partial<GatewayConfig> = demo ? { store: 'memory', ...(windowsGiven ? {} : { alwaysOpen: true }) } : {};
  // The working demo model is paced for a person: a short wait in the queue and for admission, and
  // a short segment, so its end (3102) and the resume of the same session happen within the demo.
  if (demo && !hasRealUpstream(settings) && (settings.demoScript ?? DEFAULT_CONFIG.demoScript) === 'work') {
    Object.assign(demoPresets, { queueHoldMs: 15_000, admissionHoldMs: 10_000, activeWindowMs: 25_000 });
  }
  const candidate = { ...DEFAULT_CONFIG, ...demoPresets, ...settings };
  const parsed = GatewayConfigSchema.safeParse(candidate);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(config)'}: ${issue.message}`);
    throw new ConfigError(`invalid gateway configuration:\n  ${problems.join('\n  ')}`);
  }
  const config = parsed.data;
  if (config.offPeak.length > 0 && 'peak' in settings && settings.peak && settings.peak.length > 0) {
    throw new ConfigError('give either peak or offPeak hours, not both');
  }
  if (config.store === 'mysql' && !config.mysqlUrl) throw new ConfigError('--store mysql needs --mysql-url mysql://user@host:port/database');
  if (config.accountLimits && config.store === 'mysql') throw new ConfigError('--account-limits keeps its hold in a sqlite or memory store; the mysql store does not keep one');
  if (config.stopAtUtilization !== null && !config.accountLimits) throw new ConfigError('--stop-at-utilization needs --account-limits');
  if (config.alwaysOpen && config.windowsClosed) throw new ConfigError('alwaysOpen and windowsClosed contradict each other');
  try {
    for (const range of [...config.peak, ...config.offPeak]) parseDailyRange(range);
    new OffPeakWindows(config.timeZone, { kind: 'always' });
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  if (!config.demo && config.users.length === 0) {
    throw new ConfigError('no users configured: add --user id:apiKey[:plan], "users" in the config file, or run with --demo');
  }
  const ids = new Set<string>();
  for (const user of config.users) {
    if (ids.has(user.id)) throw new ConfigError(`user id ${user.id} appears twice`);
    ids.add(user.id);
  }
  if (config.defaultModel === null && config.models.length > 0) config.defaultModel = config.models[0].id;
  // Unlisted models are sent as the default one: it must itself be listed.
  if (config.defaultModel !== null && config.models.length > 0 && !config.models.some((m) => m.id === config.defaultModel)) {
    throw new ConfigError(`defaultModel ${config.defaultModel} is not one of the allowed models (${config.models.map((m) => m.id).join(', ')})`);
  }
  if (config.opsListen !== null) parseListenAddress(config.opsListen);
  return config;
}

export function helpText(): string {
  const lines = ['Off-Peak Gateway (reference server)', '', 'usage: node dist/gateway.js [options]   |   npm run gateway -- [options]', ''];
  for (const o of GATEWAY_OPTIONS) {
    const name = o.flag ? `${o.flag}${o.type === 'bool' ? '' : ' <value>'}` : '(env only)';
    const fallback = o.key === 'config' ? '' : ` [default: ${JSON.stringify(DEFAULT_CONFIG[o.key as keyof GatewayConfig])}]`;
    lines.push(`  ${name.padEnd(34)} ${o.description}${o.key === 'users' || o.key === 'upstreamApiKey' || o.key === 'mysqlPassword' || o.key === 'opsToken' ? '' : fallback}`);
    lines.push(`  ${''.padEnd(34)} env ${o.env}`);
  }
  return lines.join('\n');
}
