// The configuration from the command line: flags, then the environment, then the JSON config file
// they name, each converted by the options table and merged over the defaults and demo presets.
import { readFileSync } from 'node:fs';
import { GATEWAY_OPTIONS } from './options';
import { ConfigError, resolveGatewayConfig } from './resolve';
import { DEFAULT_CONFIG, type GatewayConfig, type OptionSpec, type UserConfig } from './schema';

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
      const items = text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
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
      if (!/^\d*\.?\d+$/.test(text.trim()) || Number(text) > 1)
        throw new ConfigError(`${where}: expected a number from 0 to 1, got "${text}"`);
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
  'put the users in the config file (--config) with "apiKeySha256", the hex SHA-256 of each key, as the deployment example of docs/gateway.md does';

/**
 * Builds the configuration from argv and env (and the config file they name).
 * Throws ConfigError with a message fit for the terminal on any bad input.
 */
export function loadGatewayConfig(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  readFile: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): ParsedCommandLine {
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
    const spec = GATEWAY_OPTIONS.find(
      (o) => o.flag !== '' && (o.flag === flag || (negated !== null && o.flag === negated && o.type === 'bool')),
    );
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
    if (!fromFile || typeof fromFile !== 'object' || Array.isArray(fromFile))
      throw new ConfigError(`config file ${configPath} must hold a JSON object`);
    const unknown = Object.keys(fromFile).filter((k) => !(k in DEFAULT_CONFIG));
    if (unknown.length > 0) throw new ConfigError(`config file ${configPath}: unknown keys ${unknown.join(', ')}`);
  }
  delete fromFlags.config;
  delete fromEnv.config;

  const merged = { ...fromFile, ...fromEnv, ...fromFlags };
  return { config: resolveGatewayConfig(merged), help, version, warnings };
}
