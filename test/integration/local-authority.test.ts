// Personal mode's local authority (issue 21 items 1-2; docs/architecture.md#personal-mode), in
// one process: the hours in the machine's local time zone become the gateway's windows (the
// answer says when the window next opens, which the form and the cards show); the ticket file
// is a real sql.js file that a take-over reopens with the same tickets; bad hours are refused
// with a clear message. Real gateway code on loopback, real files.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemClock } from '../../src/core/clock';
import { GatewayClient } from '../../src/gateway-client/client';
import { authorityPaths, readDiscovery } from '../../src/personal/authority-files';
import { LocalAuthority, type LocalAuthorityOptions } from '../../src/personal/local-authority';
import { parsePersonalHours, PersonalSettingError } from '../../src/personal/personal-config';

const pad = (n: number) => String(n).padStart(2, '0');

describe('the local authority of personal mode', function () {
  this.timeout(60_000);
  let storageDir: string;
  const running: LocalAuthority[] = [];

  beforeEach(() => {
    storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-local-authority-'));
  });
  afterEach(async () => {
    for (const a of running.splice(0)) await a.dispose();
    fs.rmSync(storageDir, { recursive: true, force: true });
  });

  async function start(hours = 'always', over: Partial<LocalAuthorityOptions> = {}): Promise<LocalAuthority> {
    const a = await LocalAuthority.start({
      storageDir,
      settings: () => ({ hours, modelBaseUrl: 'http://127.0.0.1:9' }),
      modelApiKey: async () => undefined,
      durable: false,
      ...over,
    });
    running.push(a);
    return a;
  }

  it('offPeak.personal.hours in local time: a range two hours ahead makes the window closed until its start (what the form and the cards show)', async () => {
    const startsAt = new Date(Date.now() + 2 * 3_600_000);
    startsAt.setSeconds(0, 0);
    const endsAt = new Date(startsAt.getTime() + 3_600_000);
    const hours = `${pad(startsAt.getHours())}:${pad(startsAt.getMinutes())}-${pad(endsAt.getHours())}:${pad(endsAt.getMinutes())}`;
    const authority = await start(hours);
    const client = new GatewayClient({
      baseUrl: authority.url,
      channel: authority.connect,
      apiKey: () => authority.key,
      clock: systemClock,
    });
    const availability = await client.availability();
    assert.equal(availability.offPeakWindow.open, false);
    const opensAt = availability.offPeakWindow.open ? 0 : (availability.offPeakWindow.opensAt ?? 0);
    assert.ok(Math.abs(opensAt - startsAt.getTime()) < 5_000, `opens at ${new Date(opensAt).toString()}, expected ${startsAt.toString()}`);
  });

  it('"always" keeps the window open; a wrong range is refused saying what is expected', async () => {
    assert.deepEqual(parsePersonalHours('always'), { alwaysOpen: true });
    assert.deepEqual(parsePersonalHours(' 22:00-02:00, 12:00 - 13:00 '), { offPeak: ['22:00-02:00', '12:00-13:00'] });
    assert.throws(
      () => parsePersonalHours('nightly'),
      (e: Error) =>
        e instanceof PersonalSettingError && /offPeak\.personal\.hours: invalid time range "nightly": expected HH:MM-HH:MM/.test(e.message),
    );
    const authority = await start('always');
    const client = new GatewayClient({
      baseUrl: authority.url,
      channel: authority.connect,
      apiKey: () => authority.key,
      clock: systemClock,
    });
    assert.deepEqual((await client.availability()).offPeakWindow, { open: true });
  });

  it('only the local key gets in; the ticket file is a real SQLite file reopened by the next runner with the same tickets; authority.json and the key are private (file modes: POSIX only)', async () => {
    const first = await start();
    const wrong = new GatewayClient({
      baseUrl: first.url,
      channel: first.connect,
      apiKey: () => 'opk-local-not-the-key',
      clock: systemClock,
    });
    await assert.rejects(wrong.availability(), /401|unknown API key/);
    const client = new GatewayClient({ baseUrl: first.url, channel: first.connect, apiKey: () => first.key, clock: systemClock });
    const take = await client.take('task-1');
    const second = await start();
    assert.equal(second.serving, false);
    await first.dispose();
    for (let i = 0; i < 400 && !second.serving; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(second.serving, true, 'the follower took over');
    assert.notEqual(second.socketPath, first.socketPath, 'on names of its own start');
    const third = await start('always', { readyTimeoutMs: 2_000 });
    assert.equal(third.serving, false, 'a window that starts now follows the new runner');
    const after = new GatewayClient({ baseUrl: second.url, channel: third.connect, apiKey: () => third.key, clock: systemClock });
    const status = await after.status([take.ticketId]);
    const entry = status.tickets[0];
    assert.ok(entry && entry.state !== 'not_found' && entry.task_id === 'task-1', 'the same ticket, from the file');
    const paths = authorityPaths(storageDir);
    assert.equal(fs.readFileSync(paths.store).subarray(0, 15).toString(), 'SQLite format 3');
    if (process.platform !== 'win32')
      for (const file of [paths.key, paths.discovery, paths.store])
        assert.equal(fs.statSync(file).mode & 0o077, 0, `${path.basename(file)} is private`);
    assert.equal(readDiscovery(paths)?.pid, process.pid);
    assert.ok(!fs.readFileSync(paths.discovery, 'utf8').includes(first.key), 'authority.json holds no key');
  });

  it('a take-over listens on new names even when something else is at the old one, on a fresh store handle, with nothing lost; what the window holds follows it', async () => {
    const first = await start();
    const client = new GatewayClient({ baseUrl: first.url, channel: first.connect, apiKey: () => first.key, clock: systemClock });
    const take = await client.take('task-1');
    const second = await start();
    assert.equal(second.serving, false);
    // The following window's own client: to the runner now, to the window itself after the take-over.
    const follows = new GatewayClient({ baseUrl: second.url, channel: second.connect, apiKey: () => second.key, clock: systemClock });
    assert.deepEqual((await follows.availability()).offPeakWindow, { open: true });
    // The runner's gateway stops listening while its window still looks alive, and something that
    // is not a socket takes its place before the follower listens there.
    await new Promise<void>((resolve) => first.server!['server'].close(() => resolve()));
    fs.writeFileSync(first.socketPath, 'not a socket');
    await first.dispose();
    for (let i = 0; i < 400 && !second.serving; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(second.serving, true, 'the follower serves again');
    assert.notEqual(second.socketPath, first.socketPath, 'on a new channel');
    assert.equal(path.dirname(second.socketPath), path.dirname(first.socketPath), 'in the same private folder');
    assert.equal(readDiscovery(authorityPaths(storageDir))?.address, second.socketPath, 'authority.json names it');
    const entry = (await follows.status([take.ticketId])).tickets[0];
    assert.ok(entry && entry.state !== 'not_found' && entry.task_id === 'task-1', 'the ticket taken before is still there');
    assert.notEqual((await follows.take('task-2')).ticketId, take.ticketId, 'and new tickets are given');
  });

  it('item 2: a take-over that cannot start says why (what the panel shows), keeps trying, and serves once the cause is gone', async () => {
    const first = await start();
    const client = new GatewayClient({ baseUrl: first.url, channel: first.connect, apiKey: () => first.key, clock: systemClock });
    const take = await client.take('task-1');
    const problems: (string | undefined)[] = [];
    const second = await start('always', { onProblem: (p) => problems.push(p) });
    // The ticket file cannot be opened by the next runner: a directory stands where it was.
    const { store } = authorityPaths(storageDir);
    fs.renameSync(store, `${store}.aside`);
    fs.mkdirSync(store);
    await first.dispose().catch(() => undefined);
    for (let i = 0; i < 400 && second.problem === undefined; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(second.serving, false);
    assert.match(second.problem ?? '', /local authority cannot start \(.+\); trying again every 5 s/);
    fs.rmdirSync(store);
    fs.renameSync(`${store}.aside`, store);
    for (let i = 0; i < 800 && !second.serving; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(second.serving, true, 'served at the next try');
    assert.equal(second.problem, undefined, 'and the notice is gone');
    assert.equal(problems.at(-1), undefined);
    const after = new GatewayClient({ baseUrl: second.url, channel: second.connect, apiKey: () => second.key, clock: systemClock });
    const entry = (await after.status([take.ticketId])).tickets[0];
    assert.ok(entry && entry.state !== 'not_found' && entry.task_id === 'task-1', 'the ticket is still there');
  });
});
