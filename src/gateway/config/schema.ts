// What a gateway configuration is: its schema and defaults, and the shape of an entry of the options
// table (config/options.ts) that sets it from flags, the environment and a config file.
import * as z from '../../protocol/zod';

export const UserConfigSchema = z
  .object({
    id: z.string().check(z.minLength(1)),
    /** Plain API key (fine for demos and tests); prefer apiKeySha256 in files you keep. */
    apiKey: z.optional(z.string().check(z.minLength(8))),
    /** Hex SHA-256 of the API key. */
    apiKeySha256: z.optional(z.string().check(z.regex(/^[0-9a-f]{64}$/i))),
    plan: z.optional(z.string().check(z.minLength(1))),
    exposure: z.optional(z.boolean()),
  })
  .check(z.refine((u) => Boolean(u.apiKey) !== Boolean(u.apiKeySha256), { message: 'give exactly one of apiKey or apiKeySha256' }));
export type UserConfig = z.infer<typeof UserConfigSchema>;

export const ModelConfigSchema = z.object({ id: z.string().check(z.minLength(1)), display_name: z.string().check(z.minLength(1)) });

const nonNegativeInt = z.number().check(z.int()).check(z.gte(0));
const positiveInt = z.number().check(z.int()).check(z.gte(1));

export const GatewayConfigSchema = z.object({
  host: z.string().check(z.minLength(1)),
  port: z.number().check(z.int()).check(z.gte(0)).check(z.lte(65535)),
  store: z.enum(['sqlite', 'memory', 'mysql']),
  db: z.string().check(z.minLength(1)),
  mysqlUrl: z.nullable(z.string().check(z.minLength(1))),
  mysqlPassword: z.nullable(z.string()),
  mysqlPoolSize: positiveInt,
  demo: z.boolean(),
  demoKey: z.string().check(z.minLength(8)),
  demoScript: z.enum(['work', 'echo']),
  demoStepMs: nonNegativeInt,
  queueHoldMs: nonNegativeInt,
  admissionHoldMs: nonNegativeInt,
  timeZone: z.string().check(z.minLength(1)),
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
  upstreamUrl: z.nullable(z.string().check(z.url())),
  upstreamApiKey: z.nullable(z.string().check(z.minLength(1))),
  upstreamAuth: z.enum(['x-api-key', 'bearer']),
  upstreamTimeoutMs: positiveInt,
  openaiUpstreamUrl: z.nullable(z.string().check(z.url())),
  openaiUpstreamApiKey: z.nullable(z.string().check(z.minLength(1))),
  passClientCredential: z.boolean(),
  exposure: z.boolean(),
  eligiblePlans: z.array(z.string().check(z.minLength(1))),
  upgradeHint: z.nullable(z.string()),
  upgradeUrl: z.nullable(z.string()),
  models: z.array(ModelConfigSchema),
  defaultModel: z.nullable(z.string()),
  unknownModel: z.enum(['default', 'reject']),
  opsToken: z.nullable(z.string().check(z.minLength(16))),
  opsListen: z.nullable(z.string().check(z.minLength(1))),
  users: z.array(UserConfigSchema),
  logLevel: z.enum(['debug', 'info', 'warn', 'error', 'silent']),
  testHooks: z.boolean(),
  accountLimits: z.boolean(),
  stopAtUtilization: z.nullable(z.number().check(z.gte(0)).check(z.lte(1))),
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
  openaiUpstreamUrl: null,
  openaiUpstreamApiKey: null,
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
