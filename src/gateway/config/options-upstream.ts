// The options table, part three: the model upstream, who may use the feature (rollout, plans),
// the models served, the users, the operations address and token, logs, the account's usage
// limits and the test hooks.
import type { OptionSpec } from './schema';

export const OPTIONS_UPSTREAM: OptionSpec[] = [
  {
    key: 'upstreamUrl',
    flag: '--upstream-url',
    env: 'OFFPEAK_GATEWAY_UPSTREAM_URL',
    type: 'nullable-string',
    description: 'Anthropic-compatible API base (e.g. https://api.anthropic.com).',
  },
  {
    key: 'upstreamApiKey',
    flag: '',
    env: 'OFFPEAK_UPSTREAM_API_KEY',
    type: 'nullable-string',
    description: 'Upstream API key: environment (or config file) only, never a flag.',
  },
  {
    key: 'openaiUpstreamUrl',
    flag: '--openai-upstream-url',
    env: 'OFFPEAK_GATEWAY_OPENAI_UPSTREAM_URL',
    type: 'nullable-string',
    description: 'OpenAI Responses API base (e.g. https://api.openai.com): where /api/openai/v1/responses (Codex) goes.',
  },
  {
    key: 'openaiUpstreamApiKey',
    flag: '',
    env: 'OFFPEAK_OPENAI_UPSTREAM_API_KEY',
    type: 'nullable-string',
    description: 'OpenAI API key for it, sent as a bearer token: environment (or config file) only, never a flag.',
  },
  {
    key: 'passClientCredential',
    flag: '--pass-client-credential',
    env: 'OFFPEAK_GATEWAY_PASS_CLIENT_CREDENTIAL',
    type: 'bool',
    description:
      "A model request authenticated with x-offpeak-key goes upstream with the client's own Authorization / x-api-key (e.g. a Claude Code login) instead of the gateway's key; neither is stored or logged. Personal mode's local authority sets it.",
  },
  {
    key: 'upstreamAuth',
    flag: '--upstream-auth',
    env: 'OFFPEAK_GATEWAY_UPSTREAM_AUTH',
    type: 'string',
    description: 'How the key is sent upstream: x-api-key (Anthropic) or bearer.',
  },
  {
    key: 'upstreamTimeoutMs',
    flag: '--upstream-timeout-ms',
    env: 'OFFPEAK_GATEWAY_UPSTREAM_TIMEOUT_MS',
    type: 'int',
    description: 'Upstream socket idle timeout.',
  },
  {
    key: 'exposure',
    flag: '--exposure',
    env: 'OFFPEAK_GATEWAY_EXPOSURE',
    type: 'bool',
    description: 'Feature exposed (gray release switch for all users).',
  },
  {
    key: 'eligiblePlans',
    flag: '--eligible-plans',
    env: 'OFFPEAK_GATEWAY_ELIGIBLE_PLANS',
    type: 'list',
    description: 'Plans that may take tickets (others get 3101).',
  },
  {
    key: 'upgradeHint',
    flag: '--upgrade-hint',
    env: 'OFFPEAK_GATEWAY_UPGRADE_HINT',
    type: 'nullable-string',
    description: 'Shown to users whose plan is not eligible.',
  },
  {
    key: 'upgradeUrl',
    flag: '--upgrade-url',
    env: 'OFFPEAK_GATEWAY_UPGRADE_URL',
    type: 'nullable-string',
    description: 'Upgrade link for them.',
  },
  {
    key: 'models',
    flag: '--models',
    env: 'OFFPEAK_GATEWAY_MODELS',
    type: 'models',
    description: 'Allowed models: id or id=Display Name, comma-separated.',
  },
  {
    key: 'defaultModel',
    flag: '--default-model',
    env: 'OFFPEAK_GATEWAY_DEFAULT_MODEL',
    type: 'nullable-string',
    description: 'Default model (default: the first allowed model).',
  },
  {
    key: 'unknownModel',
    flag: '--unknown-model',
    env: 'OFFPEAK_GATEWAY_UNKNOWN_MODEL',
    type: 'string',
    description:
      'A model request naming a model outside --models: default (sent as the default model) or reject (400). An empty --models allows any model.',
  },
  {
    key: 'users',
    flag: '--user',
    env: 'OFFPEAK_GATEWAY_USERS',
    type: 'users',
    description:
      'A user id:apiKey[:plan] (repeat the flag, or comma-separate in the env var). The flag puts keys in argv (a warning says so): prefer "users" with apiKeySha256 in the config file.',
  },
  {
    key: 'opsListen',
    flag: '--ops-listen',
    env: 'OFFPEAK_GATEWAY_OPS_LISTEN',
    type: 'nullable-string',
    description: 'host:port for /metrics and /healthz alone (then not served on the API address); port 0 = any free port.',
  },
  {
    key: 'opsToken',
    flag: '',
    env: 'OFFPEAK_GATEWAY_OPS_TOKEN',
    type: 'nullable-string',
    description:
      '/metrics and /healthz answer only to Authorization: Bearer <this> (16+ characters): environment (or config file) only, never a flag.',
  },
  {
    key: 'logLevel',
    flag: '--log-level',
    env: 'OFFPEAK_GATEWAY_LOG_LEVEL',
    type: 'string',
    description: 'debug, info, warn, error or silent (JSON lines on stderr).',
  },
  {
    key: 'accountLimits',
    flag: '--account-limits',
    env: 'OFFPEAK_GATEWAY_ACCOUNT_LIMITS',
    type: 'bool',
    description:
      'The upstream is one account (personal mode): a 429 with anthropic-ratelimit-unified-status: rejected holds every model request (3105 with the reset) and promotes nothing until the reset; the hold survives a restart (sqlite or memory store).',
  },
  {
    key: 'stopAtUtilization',
    flag: '--stop-at-utilization',
    env: 'OFFPEAK_GATEWAY_STOP_AT_UTILIZATION',
    type: 'nullable-fraction',
    description:
      'With --account-limits: a reported 5-hour or 7-day utilization at or above this (0..1) promotes no new ticket until that window resets; running segments go on.',
  },
  {
    key: 'testHooks',
    flag: '--test-hooks',
    env: 'OFFPEAK_GATEWAY_TEST_HOOKS',
    type: 'bool',
    description: 'Enable POST /__test/tick and /__test/advance-clock (tests only; never in production).',
  },
];
