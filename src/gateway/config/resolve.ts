// Defaults < demo presets < the given settings, validated: the checks that span several settings,
// and the refusal every bad configuration throws.
import { OffPeakWindows, parseDailyRange } from '../authority/windows';
import { DEFAULT_CONFIG, GatewayConfigSchema, type GatewayConfig } from './schema';

/** A bad configuration, said in words fit for the terminal. */
export class ConfigError extends Error {}

/** `host:port` or `[v6-host]:port`, as given to --ops-listen. */
export function parseListenAddress(text: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text.trim());
  if (!match || Number(match[3]) > 65535) throw new ConfigError(`opsListen: expected host:port (e.g. 127.0.0.1:9090), got "${text}"`);
  return { host: match[1] ?? match[2], port: Number(match[3]) };
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
  if (config.store === 'mysql' && !config.mysqlUrl)
    throw new ConfigError('--store mysql needs --mysql-url mysql://user@host:port/database');
  if (config.accountLimits && config.store === 'mysql')
    throw new ConfigError('--account-limits keeps its hold in a sqlite or memory store; the mysql store does not keep one');
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
    throw new ConfigError(
      `defaultModel ${config.defaultModel} is not one of the allowed models (${config.models.map((m) => m.id).join(', ')})`,
    );
  }
  if (config.opsListen !== null) parseListenAddress(config.opsListen);
  return config;
}
