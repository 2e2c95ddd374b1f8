// The gateway as a real child process: the esbuild bundle (dist-style, better-sqlite3 external)
// in demo mode, the source entry with a SQLite file across SIGTERM + restart, graceful shutdown
// with a stream in flight, test hooks, and configuration errors.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { GatewayPaths, TICKET_HEADER } from '../../src/protocol/gateway';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';
import {
  buildGatewayBundle,
  GatewayTestClient,
  killGateways,
  spawnGateway,
  TempDir,
  ticketIdOf,
  type RunningGateway,
} from './gateway-helpers';

const root = path.resolve(__dirname, '../..');
const sourceEntry = path.join(root, 'src/gateway/main.ts');

async function runToExit(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', sourceEntry, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, stdout, stderr };
}

describe('reference gateway as a process (CLI, demo mode, signals)', function () {
  this.timeout(120_000);
  let dir: TempDir;
  const running: RunningGateway[] = [];

  beforeEach(() => {
    dir = new TempDir();
  });
  afterEach(async () => {
    await killGateways(running);
    dir.remove();
  });

  it('the bundled gateway (node <bundle> --demo --port 0) prints its URL and demo key and answers with a labelled demo model', async () => {
    // Written under node_modules/.cache so better-sqlite3 (external) resolves from the project's
    // node_modules.
    const outDir = path.join(root, 'node_modules/.cache/offpeak-gateway-test');
    mkdirSync(outDir, { recursive: true });
    const bundle = path.join(outDir, `gateway-${process.pid}.js`);
    await buildGatewayBundle(bundle);
    assert.ok(existsSync(bundle));
    // The echo script: no demo pacing, so the ticket is ready within the 1 s promote timer.
    const g = await spawnGateway(['--demo', '--demo-script', 'echo', '--port', '0', '--log-level', 'warn'], { bundle });
    running.push(g);
    rmSync(bundle, { force: true }); // loaded already; do not leave one per run behind
    rmSync(`${bundle}.map`, { force: true });
    const key = /Demo API key: (\S+)/.exec(g.stdout())?.[1];
    assert.ok(key, `demo key printed:\n${g.stdout()}`);
    assert.match(g.stdout(), /DEMO MODEL/);
    const client = new GatewayTestClient(g.url, key);
    // Windows always open in demo mode: the 1 s promote timer makes the ticket ready.
    const id = ticketIdOf(await client.take('demo-task'));
    let state = '';
    for (let i = 0; i < 100 && state !== 'ready'; i++) {
      state = (await client.stateOf(id)).state as string;
      if (state !== 'ready') await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(state, 'ready');
    const answer = await client.message(id, {
      model: 'claude-x',
      max_tokens: 50,
      stream: true,
      messages: [{ role: 'user', content: 'hello demo' }],
    });
    assert.equal(answer.status, 200);
    assert.match(String(answer.body), /Off-Peak demo model/);
    assert.match(String(answer.body), /event: message_stop/);
    g.child.kill('SIGTERM');
    assert.equal(await g.exited, 0);
  });

  it('SIGTERM lets an in-flight stream finish, then exits 0; the SQLite file keeps every ticket for the next start', async () => {
    const upstream = await FakeAnthropicUpstream.start();
    try {
      const db = dir.file('gateway.sqlite');
      const args = [
        '--port',
        '0',
        '--db',
        db,
        '--user',
        'alice:alice-key-123456',
        '--always-open',
        '--promote-interval-ms',
        '50',
        '--upstream-url',
        upstream.url,
        '--log-level',
        'silent',
      ];
      const first = await spawnGateway(args);
      running.push(first);
      const client = new GatewayTestClient(first.url, 'alice-key-123456');
      const streaming = ticketIdOf(await client.take('streaming'));
      let state = '';
      for (let i = 0; i < 100 && state !== 'ready'; i++) {
        state = (await client.stateOf(streaming)).state as string;
        if (state !== 'ready') await new Promise((r) => setTimeout(r, 50));
      }
      const queuedBehind = [ticketIdOf(await client.take('second')), ticketIdOf(await client.take('third'))];
      upstream.enqueue({ kind: 'text', text: 'finished despite SIGTERM', delayMs: 1500 });
      const inFlight = client.message(streaming, { model: 'm', messages: [{ role: 'user', content: 'x' }] });
      await upstream.waitForMessageRequest(1);
      first.child.kill('SIGTERM');
      const answer = await inFlight;
      assert.equal(answer.status, 200);
      assert.equal((answer.body as { content: { text: string }[] }).content[0].text, 'finished despite SIGTERM');
      assert.equal(await first.exited, 0);
      const before = [streaming, ...queuedBehind];

      const second = await spawnGateway(args);
      running.push(second);
      const again = new GatewayTestClient(second.url, 'alice-key-123456');
      const states = (await again.status(before)).body.tickets;
      assert.equal(states[0].state, 'active', 'the streamed ticket stayed active across the restart');
      assert.ok(
        states.slice(1).every((s) => s.state === 'ready' || s.state === 'queued'),
        JSON.stringify(states),
      );
      assert.equal(ticketIdOf(await again.take('streaming')), streaming, 'take stays retry-safe after the restart');
      second.child.kill('SIGINT');
      assert.equal(await second.exited, 0);
    } finally {
      await upstream.close();
    }
  });

  it('test hooks move the clock and run a promote tick (for end-to-end tests of long windows)', async () => {
    const g = await spawnGateway([
      '--port',
      '0',
      '--store',
      'memory',
      '--user',
      'alice:alice-key-123456',
      '--always-open',
      '--promote-interval-ms',
      '0',
      '--ready-ttl-ms',
      '60000',
      '--test-hooks',
      '--log-level',
      'silent',
    ]);
    running.push(g);
    const client = new GatewayTestClient(g.url, 'alice-key-123456');
    const id = ticketIdOf(await client.take('t'));
    assert.equal((await client.stateOf(id)).state, 'queued');
    const tick = await client.request('POST', '/__test/tick');
    assert.deepEqual((tick.body as { promoted: string[] }).promoted, [id]);
    await client.request('POST', '/__test/advance-clock', { ms: 60_000 });
    assert.equal((await client.stateOf(id)).state, 'expired');
    const model = await client.request('POST', GatewayPaths.anthropicMessages, { messages: [] }, { [TICKET_HEADER]: id });
    assert.equal(model.status, 400);
    g.child.kill('SIGTERM');
    assert.equal(await g.exited, 0);
  });

  it('without --test-hooks the hooks do not exist', async () => {
    const g = await spawnGateway(['--port', '0', '--store', 'memory', '--user', 'alice:alice-key-123456', '--log-level', 'silent']);
    running.push(g);
    const client = new GatewayTestClient(g.url, 'alice-key-123456');
    assert.equal((await client.request('POST', '/__test/tick')).status, 404);
    g.child.kill('SIGTERM');
    assert.equal(await g.exited, 0);
  });

  it('a config file and env combine (env beats the file); bad input exits 2 with a clear message', async () => {
    const config = dir.file('gateway.json');
    writeFileSync(
      config,
      JSON.stringify({
        users: [{ id: 'carol', apiKey: 'carol-key-123456', plan: 'coding' }],
        timeZone: 'Europe/Berlin',
        peak: ['09:00-17:00'],
        store: 'memory',
      }),
    );
    const g = await spawnGateway(['--config', config, '--port', '0', '--log-level', 'silent'], {
      env: { OFFPEAK_GATEWAY_TIME_ZONE: 'America/New_York' },
    });
    running.push(g);
    const configs = await new GatewayTestClient(g.url, 'carol-key-123456').configs();
    const offPeak = (configs.body as { off_peak: { time_zone: string; description: string } }).off_peak;
    assert.equal(offPeak.time_zone, 'America/New_York', 'env beats the file');
    assert.match(offPeak.description, /09:00–17:00/);
    g.child.kill('SIGTERM');
    await g.exited;

    const unknownFlag = await runToExit(['--no-such-flag']);
    assert.equal(unknownFlag.code, 2);
    assert.match(unknownFlag.stderr, /unknown option --no-such-flag/);
    const noUsers = await runToExit(['--port', '0']);
    assert.equal(noUsers.code, 2);
    assert.match(noUsers.stderr, /no users configured/);
    const badZone = await runToExit(['--demo', '--time-zone', 'Mars/Olympus', '--port', '0']);
    assert.equal(badZone.code, 2);
    assert.match(badZone.stderr, /unknown time zone "Mars\/Olympus"/);
    const badRange = await runToExit(['--demo', '--peak', '25:00-26:00']);
    assert.equal(badRange.code, 2);
    assert.match(badRange.stderr, /invalid time range "25:00-26:00"/);
    const help = await runToExit(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--ready-ttl-ms/);
  });
});
