// The options table: the flags, env names and descriptions of every setting, in the order --help
// (and the table in docs/gateway.md) show them, and the --help text made from it.
import { OPTIONS_LIMITS } from './options-limits';
import { OPTIONS_SERVER } from './options-server';
import { OPTIONS_UPSTREAM } from './options-upstream';
import { DEFAULT_CONFIG, type GatewayConfig, type OptionSpec } from './schema';

/** Every option; flag `--x`, env `OFFPEAK_GATEWAY_X` (the upstream key has its own env name). */
export const GATEWAY_OPTIONS: OptionSpec[] = [...OPTIONS_SERVER, ...OPTIONS_LIMITS, ...OPTIONS_UPSTREAM];

export function helpText(): string {
  const lines = ['Off-Peak Gateway (reference server)', '', 'usage: node dist/gateway.js [options]   |   npm run gateway -- [options]', ''];
  for (const o of GATEWAY_OPTIONS) {
    const name = o.flag ? `${o.flag}${o.type === 'bool' ? '' : ' <value>'}` : '(env only)';
    const fallback = o.key === 'config' ? '' : ` [default: ${JSON.stringify(DEFAULT_CONFIG[o.key as keyof GatewayConfig])}]`;
    lines.push(
      `  ${name.padEnd(34)} ${o.description}${o.key === 'users' || o.key === 'upstreamApiKey' || o.key === 'openaiUpstreamApiKey' || o.key === 'mysqlPassword' || o.key === 'opsToken' ? '' : fallback}`,
    );
    lines.push(`  ${''.padEnd(34)} env ${o.env}`);
  }
  return lines.join('\n');
}
