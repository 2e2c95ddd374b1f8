// CLI entry of the reference Off-Peak Gateway (bundled to dist/gateway.js; better-sqlite3 and mysql2 stay
// external). `node dist/gateway.js --help` lists every option; see the README "Reference gateway".
import { OffsetClock } from './offset-clock';
import { ConfigError, helpText, loadGatewayConfig } from './config';
import { startDemoModel } from './demo-model';
import { createLogger } from './logger';
import { closeUpstreamAgents } from './model-proxy';
import { GATEWAY_VERSION, GatewayServer } from './server';
import { systemClock } from '../core/clock';

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = loadGatewayConfig(process.argv.slice(2), process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`off-peak gateway: ${error.message}\n`);
      process.exitCode = 2;
      return;
    }
    throw error;
  }
  if (parsed.help) {
    process.stdout.write(helpText() + '\n');
    return;
  }
  if (parsed.version) {
    process.stdout.write(`${GATEWAY_VERSION}\n`);
    return;
  }
  const config = parsed.config;
  const log = createLogger(config.logLevel);
  // Test hooks may move time forward; production time is the system clock.
  const clock = config.testHooks ? new OffsetClock(systemClock) : systemClock;

  const useDemoModel = config.demo && !(config.upstreamUrl && config.upstreamApiKey);
  const demoModel = useDemoModel ? await startDemoModel() : undefined;
  let gateway: GatewayServer;
  try {
    gateway = await GatewayServer.start({ config: useDemoModel ? { ...config, upstreamUrl: demoModel?.url ?? null } : config, clock, log });
  } catch (error) {
    await demoModel?.close();
    process.stderr.write(`off-peak gateway: cannot start: ${(error as Error).message}\n`);
    process.exitCode = 1;
    return;
  }

  const lines = [`Off-Peak Gateway listening on ${gateway.url}`];
  lines.push(`  windows: ${gateway.authority.windows.describe()}`);
  lines.push(`  store: ${config.store === 'sqlite' ? `sqlite ${config.db}` : config.store === 'mysql' ? `mysql ${config.mysqlUrl}` : 'memory (tickets are lost on exit)'}`);
  if (config.demo) {
    lines.push('  DEMO MODE: off-peak windows always open (unless set), memory store (unless set)');
    lines.push(`  Demo API key: ${config.demoKey}`);
    lines.push(useDemoModel ? '  model upstream: built-in DEMO MODEL (scripted replies, not a real model)' : `  model upstream: ${config.upstreamUrl}`);
  } else {
    lines.push(`  model upstream: ${config.upstreamUrl ?? 'none configured (model requests answer 503)'}`);
  }
  lines.push(`  Anthropic base URL for agents: ${gateway.url}/api/anthropic`);
  if (gateway.opsUrl) lines.push(`  /metrics and /healthz: ${gateway.opsUrl} only`);
  process.stdout.write(lines.join('\n') + '\n');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      log.warn('second signal: exiting now', { signal });
      process.exit(1);
    }
    stopping = true;
    log.info('signal received', { signal });
    void gateway
      .close()
      .then(() => demoModel?.close())
      .then(() => {
        closeUpstreamAgents();
        process.exitCode = 0;
      })
      .catch((error: unknown) => {
        log.error('shutdown failed', { error });
        process.exitCode = 1;
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

void main();
