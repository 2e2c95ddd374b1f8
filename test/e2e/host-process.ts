// A window (the real HostEngine) as its own process, so a test can kill it with SIGKILL mid-run.
//   node --import tsx test/e2e/host-process.ts '<TestEngineOptions JSON + optional "create" / "personal">'
// Prints one JSON object per line: {ready, recovery}, {created}, {event}, and in personal mode
// {authority: {serving, socketPath}} and {serving: {at, takeover}}. SIGTERM = clean exit. A login token of
// the reference agent's own (personal mode) comes in the environment (OFFPEAK_TEST_AGENT_TOKEN),
// never in argv.
import type { CreateTaskInput } from '../../src/service';
import type { HostEngine } from '../../src/engine/host-engine';
import type { LocalAuthority } from '../../src/personal/local-authority';
import { startPersonalTestEngine, startTestEngine, type PersonalTestOptions, type TestEngineOptions } from './test-engine';

const print = (value: unknown) => process.stdout.write(JSON.stringify(value) + '\n');
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as TestEngineOptions & { create?: CreateTaskInput; personal?: PersonalTestOptions };
  const onEvent = (event: unknown) => print({ event });
  let engine: HostEngine;
  let authority: LocalAuthority | undefined;
  if (options.personal) {
    const token = process.env.OFFPEAK_TEST_AGENT_TOKEN;
    const started = await startPersonalTestEngine({
      ...options,
      personal: options.personal,
      referenceAgentEnv: token ? { ANTHROPIC_AUTH_TOKEN: token } : undefined,
      onEvent,
      onServing: (serving) => print({ serving }),
    });
    engine = started.engine;
    authority = started.authority;
    print({ authority: { serving: authority.serving, socketPath: authority.socketPath } });
  } else {
    engine = await startTestEngine({ ...options, onEvent });
  }
  // A window started right after a crash finds the dead window's lease until it takes it over;
  // the engine recovers once it holds the lease. Report what its recoveries did (none after 6 s: not the leader).
  for (let i = 0; i < 240 && engine.recoveries.length === 0; i++) await pause(25);
  const recovery = {
    requeued: engine.recoveries.flatMap((r) => r.requeued),
    stillRunning: engine.recoveries.flatMap((r) => r.stillRunning),
    killedOrphans: engine.recoveries.flatMap((r) => r.killedOrphans),
  };
  print({ ready: true, recovery });
  // The service's timers are unref'd (they must not keep an extension host alive); a window
  // process lives until it is closed, so keep this one alive until SIGTERM.
  const keepAlive = setInterval(() => undefined, 60_000);
  process.once('SIGTERM', () => {
    clearInterval(keepAlive);
    void engine
      .dispose()
      .then(() => authority?.dispose())
      .then(() => process.exit(0));
  });
  if (options.create) {
    for (let i = 0; i < 200 && !engine.service.isLeader; i++) await pause(25);
    const task = await engine.service.create(options.create);
    print({ created: task.id });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`host-process: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
