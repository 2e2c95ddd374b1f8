// CLI entry of the reference Off-Peak Gateway (bundled to dist/gateway.js; better-sqlite3 and mysql2 stay
// external). `node dist/gateway.js --help` lists every option; see docs/gateway.md.
import { OffsetClock } from './authority/offset-clock';
import { ConfigError, helpText, loadGatewayConfig, usesDemoModel } from './config';
import { launchGateway, type LaunchedGateway } from './launch';
import { createLogger } from './http/logger';
import { closeUpstreamAgents } from './model/model-proxy';
import { GATEWAY_VERSION } from './http/ops-routes';
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
  for (const warning of parsed.warnings) process.stderr.write(`off-peak gateway: warning: ${warning}\n`);
  const config = parsed.config;
  const log = createLogger(config.logLevel);
  // Test hooks may move time forward; production time is the system clock.
  const clock = config.testHooks ? new OffsetClock(systemClock) : systemClock;

  const useDemoModel = usesDemoModel(config);
  let launched: LaunchedGateway;
  try {
    launched = await launchGateway(config, { clock, log });
  } catch (error) {
    process.stderr.write(`off-peak gateway: cannot start: ${(error as Error).message}\n`);
    process.exitCode = 1;
    return;
  }
  const { gateway } = launched;

  const lines = [`Off-Peak Gateway listening on ${gateway.url}`];
  lines.push(`  windows: ${gateway.authority.windows.describe()}`);
  lines.push(
    `  store: ${config.store === 'sqlite' ? `sqlite ${config.db}` : config.store === 'mysql' ? `mysql ${config.mysqlUrl}` : 'memory (tickets are lost on exit)'}`,
  );
  if (config.demo) {
    lines.push('  DEMO MODE: off-peak windows always open (unless set), memory store (unless set)');
    lines.push(`  Demo API key: ${config.demoKey}`);
    lines.push(
      useDemoModel
        ? '  model upstream: built-in DEMO MODEL (scripted replies, not a real model)'
        : `  model upstream: ${config.upstreamUrl}`,
    );
    if (useDemoModel && config.demoScript === 'work') {
      lines.push(
        `  demo pacing: ${config.queueHoldMs / 1000} s in the queue, ${config.admissionHoldMs / 1000} s waiting for admission, ` +
          `${config.activeWindowMs / 1000} s segments, ${config.demoStepMs / 1000} s per model reply`,
      );
    }
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
    void launched
      .close()
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
