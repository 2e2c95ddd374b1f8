// `npm start` serves a real VS Code (code-server) whose terminal runs as the person who started it:
// it must ask for a password. This runs the real scripts/start.ts (real code-server, real demo
// gateway from dist/: `npm run build` first) and speaks HTTP to it as a browser would.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../scripts/vscode/code-server';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Every process's argv on this machine (Linux /proc), joined with spaces. */
function allCommandLines(): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      out.push(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' '));
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

describe('npm start (scripts/start.ts, real code-server)', function () {
  // On a fresh machine the first run also installs code-server.
  this.timeout(20 * 60_000);
  let child: ChildProcess | undefined;
  let stateDir = '';

  beforeEach(() => {
    stateDir = mkdtempSync(path.join(os.tmpdir(), 'offpeak-start-auth-'));
  });
  afterEach(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    child = undefined;
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('item 9: the workbench answers only after a login with the password npm start printed, which is in no argv', async () => {
    const port = await freePort();
    child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(repoRoot, 'scripts', 'start.ts'), '--no-build', '--port', String(port), '--state', stateDir],
      {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      child?.stdout?.on('data', () => {
        const match = /Open this URL in a browser:\s*\n\s*(http:\/\/\S+)/.exec(output);
        if (match) resolve(match[1]);
      });
      child?.once('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${output}`)));
    });
    await new Promise((r) => setTimeout(r, 200)); // the lines printed right after the URL
    const password = /^Password[^:]*: (\S+)$/m.exec(output)?.[1];
    assert.ok(password, `npm start printed no password:\n${output}`);
    assert.ok(password.length >= 16, 'a random password, not a word');
    const origin = new URL(url).origin;

    const anonymous = await fetch(url, { redirect: 'manual' });
    assert.equal(anonymous.status, 302, `the workbench answered without a login:\n${output}`);
    assert.match(anonymous.headers.get('location') ?? '', /login/);
    const wrong = await fetch(`${origin}/login`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ password: 'not-the-password' }),
    });
    assert.notEqual(wrong.status, 302, 'a wrong password does not log in');

    const login = await fetch(`${origin}/login`, { method: 'POST', redirect: 'manual', body: new URLSearchParams({ password }) });
    assert.equal(login.status, 302, 'the printed password logs in');
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    assert.ok(cookie.includes('='), 'a session cookie');
    const workbench = await fetch(url, { redirect: 'manual', headers: { cookie } });
    assert.equal(workbench.status, 200);
    assert.match(await workbench.text(), /workbench/i);

    assert.deepEqual(
      allCommandLines().filter((line) => line.includes(password)),
      [],
      'the password is in no process argv',
    );
    // The demo gateway (its demo key is printed and public) listens on loopback.
    assert.match(output, /Reference gateway \(demo mode\): http:\/\/127\.0\.0\.1:\d+/);
    // Readable lines only (item 8 of issue 39): the gateway's JSON log is in a file the start names.
    assert.deepEqual(
      output.split('\n').filter((line) => /^(\[gateway\] )?\{"/.test(line)),
      [],
      'no raw JSON log line on the console',
    );
    assert.match(output, /the demo gateway's log \(JSON lines[^)]*\): \S+gateway\.log/);
  });
});
