// A host (one "window") as its own process, so a test can kill it with SIGKILL mid-run.
//   node --import tsx test/e2e/host-process.ts '<HostOptions JSON + optional "create">'
// Prints one JSON object per line: {ready, recovery}, {created}, {event}. SIGTERM = clean exit.
import type { CreateTaskInput } from '../../src/service';
import { startHost, type HostOptions } from './runtime-harness';

const print = (value: unknown) => process.stdout.write(JSON.stringify(value) + '\n');

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as HostOptions & { create?: CreateTaskInput };
  const host = await startHost({ ...options, onEvent: (event) => print({ event }) });
  print({ ready: true, recovery: host.recovery });
  // The service's timers are unref'd (they must not keep an extension host alive); a window
  // process lives until it is closed, so keep this one alive until SIGTERM.
  const keepAlive = setInterval(() => undefined, 60_000);
  process.once('SIGTERM', () => {
    clearInterval(keepAlive);
    void host.stop().then(() => process.exit(0));
  });
  if (options.create) {
    for (let i = 0; i < 200 && !host.service.isLeader; i++) await new Promise((r) => setTimeout(r, 25));
    const task = await host.service.create(options.create);
    print({ created: task.id });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`host-process: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
