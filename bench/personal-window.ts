// One "window" of bench/personal.bench.ts: starts or follows this machine's local authority on the
// globalStorage dir given as argv[2] (no secret in argv), prints `serving` or `following` (and
// `serving` again after a take-over), stays until SIGTERM (a window closing: it disposes) or SIGKILL.
import { LocalAuthority } from '../src/personal/local-authority';
import { loadSqlJs } from '../src/store/db/sqljs';

async function main(): Promise<void> {
  const storageDir = process.argv[2];
  // A window's task store has loaded sql.js before the authority is needed.
  await loadSqlJs();
  const authority = await LocalAuthority.start({
    storageDir,
    settings: () => ({ hours: 'always', modelBaseUrl: 'http://127.0.0.1:9' }),
    modelApiKey: async () => undefined,
    onServing: (event) => event.takeover && process.stdout.write('serving\n'),
  });
  process.stdout.write(`${authority.serving ? 'serving' : 'following'}\n`);
  const keepAlive = setInterval(() => undefined, 60_000);
  process.once('SIGTERM', () => {
    clearInterval(keepAlive);
    void authority.dispose().then(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`personal-window: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
