/** File-level behaviour of the store: corrupt files, disk errors, the lock, the lease file, generations, change events. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import { StoreError, TaskStore, type StoreChange, type StoreFs, type StoreNotice } from '../../src/store';
import { readGeneration } from '../../src/store/db/db-file';
import { FileLock } from '../../src/store/db/file-lock';

const input = (id: string) => ({ id, title: id, prompt: `prompt ${id}`, permissionMode: 'default' as const, workspacePath: '/w' });
/** Rows big enough that 200 of them span many pages. */
const paddedInput = (id: string) => ({ ...input(id), prompt: `prompt ${id} `.padEnd(300, '.') });
const errno = (code: string, syscall: string) => Object.assign(new Error(`${code}: test fault, ${syscall}`), { code, syscall });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A pid that surely belongs to no running process: a child that already exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', '']);
  return r.pid!;
}

async function until(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(10);
  }
}

describe('store: files, lock, generations and change events', () => {
  let dir: string;
  let file: string;
  const open: TaskStore[] = [];
  const openStore = async (opts: Partial<Parameters<typeof TaskStore.open>[0]> = {}) => {
    const s = await TaskStore.open({ directory: dir, watch: false, ...opts });
    open.push(s);
    return s;
  };
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-store-file-'));
    file = path.join(dir, 'tasks-index.sqlite');
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('moves a corrupt file aside at open (kept byte for byte), reports it, and works on a fresh DB', async () => {
    const garbage = Buffer.from('this is not a sqlite database, but the user may want it back '.repeat(50));
    writeFileSync(file, garbage);
    const notices: StoreNotice[] = [];
    const clock = new ManualClock(Date.UTC(2026, 2, 3, 4, 5, 6));
    const store = await openStore({ clock, onNotice: (n) => notices.push(n) });
    assert.equal(notices.length, 1);
    const notice = notices[0];
    assert.equal(notice.kind, 'corrupt-moved-aside');
    assert.deepEqual(store.notices, notices);
    if (notice.kind !== 'corrupt-moved-aside') return;
    assert.equal(path.basename(notice.movedTo), 'tasks-index.sqlite.corrupt-2026-03-03T04-05-06-000Z');
    assert.ok(readFileSync(notice.movedTo).equals(garbage), 'the bad bytes are kept');
    assert.match(notice.message, /kept as tasks-index\.sqlite\.corrupt-.*new, empty database/);
    await store.mutate((tx) => tx.tasks.insert(input('after')));
    const reopened = await openStore();
    assert.deepEqual(
      reopened.read((tx) => tx.tasks.list().map((t) => t.id)),
      ['after'],
    );
    assert.equal(reopened.notices.length, 0);
  });

  it('a file damaged while open is moved aside at the next write, and the last good copy is written back with the new change', async () => {
    const store = await openStore();
    await store.mutate((tx) => tx.tasks.insert(input('kept')));
    writeFileSync(file, Buffer.alloc(8192, 7)); // another writer scribbled over it
    assert.deepEqual(
      store.read((tx) => tx.tasks.list().map((t) => t.id)),
      ['kept'],
      'reads keep serving the last good copy',
    );
    await store.mutate((tx) => tx.tasks.insert(input('new')));
    const notice = store.notices.find((n) => n.kind === 'corrupt-moved-aside');
    assert.ok(notice && notice.kind === 'corrupt-moved-aside' && existsSync(notice.movedTo));
    const other = await openStore();
    assert.deepEqual(
      other.read((tx) => tx.tasks.list().map((t) => t.id)),
      ['kept', 'new'],
    );
  });

  it('an unreadable path (a directory where the file should be) is moved aside too', async () => {
    mkdirSync(file);
    writeFileSync(path.join(file, 'inside.txt'), 'x');
    const store = await openStore();
    assert.equal(store.notices[0]?.kind, 'corrupt-moved-aside');
    await store.mutate((tx) => tx.tasks.insert(input('ok')));
    const aside = readdirSync(dir).find((n) => n.startsWith('tasks-index.sqlite.corrupt-'))!;
    assert.ok(existsSync(path.join(dir, aside, 'inside.txt')));
  });

  it('a batch of 100 changes is one persist and one new generation; a refused change writes nothing', async () => {
    const store = await openStore();
    const gen0 = readGeneration(file);
    const persists = store.stats.persists;
    await store.batch(
      Array.from({ length: 100 }, (_, i) => (tx: Parameters<Parameters<TaskStore['mutate']>[0]>[0]) => tx.tasks.insert(input(`b${i}`))),
    );
    assert.equal(store.stats.persists, persists + 1);
    const gen1 = readGeneration(file);
    assert.equal(Number(gen1.split(':')[0]), Number(gen0.split(':')[0]) + 1);
    assert.equal(await store.mutate((tx) => tx.tasks.continue('b1')), false);
    assert.equal(store.stats.persists, persists + 1, 'nothing changed, nothing written');
    assert.equal(readGeneration(file), gen1);
  });

  it("reads and writes of one store see another process's writes (generation check, reload)", async () => {
    const a = await openStore();
    const b = await openStore();
    await a.mutate((tx) => tx.tasks.insert(input('from-a')));
    assert.deepEqual(
      b.read((tx) => tx.tasks.list().map((t) => t.id)),
      ['from-a'],
    );
    await b.mutate((tx) => tx.tasks.insert(input('from-b')));
    await a.mutate((tx) => tx.tasks.pause('from-b'));
    assert.deepEqual(
      b.read((tx) => tx.tasks.list().map((t) => [t.id, t.status])),
      [
        ['from-a', 'queued'],
        ['from-b', 'paused'],
      ],
    );
    const reloadsBefore = b.stats.reloads;
    b.read((tx) => tx.tasks.count());
    assert.equal(b.stats.reloads, reloadsBefore, 'no reload when nothing changed');
  });

  it('fires a change event in other windows when one persists (file watch), and a local one in the writer', async () => {
    const a = await openStore({ watch: { pollMs: 200 } });
    const b = await openStore({ watch: { pollMs: 200 } });
    const seenA: StoreChange[] = [];
    const seenB: StoreChange[] = [];
    a.onDidChange((c) => seenA.push(c));
    const sub = b.onDidChange((c) => seenB.push(c));
    await a.mutate((tx) => tx.tasks.insert(input('x')));
    await until(() => seenB.length > 0);
    assert.equal(seenB[0].origin, 'external');
    assert.equal(seenB[0].generation, readGeneration(file));
    assert.equal(b.read((tx) => tx.tasks.get('x'))?.prompt, 'prompt x', 'already reloaded when the event fired');
    assert.deepEqual(
      seenA.map((c) => c.origin),
      ['local'],
    );
    sub.dispose();
    await a.mutate((tx) => tx.tasks.insert(input('y')));
    await sleep(400);
    assert.equal(seenB.length, 1, 'disposed listeners hear nothing');
  });

  it("a read or a write that picks up another window's change fires the external event too (watch off)", async () => {
    const a = await openStore();
    const b = await openStore();
    const seen: StoreChange[] = [];
    b.onDidChange((c) => seen.push(c));
    await a.mutate((tx) => tx.tasks.insert(input('one')));
    assert.equal(
      b.read((tx) => tx.tasks.count()),
      1,
    );
    await Promise.resolve();
    assert.deepEqual(
      seen.map((c) => c.origin),
      ['external'],
    );
    await a.mutate((tx) => tx.tasks.insert(input('two')));
    await b.mutate((tx) => tx.tasks.pause('two'));
    await Promise.resolve();
    assert.deepEqual(
      seen.map((c) => c.origin),
      ['external', 'external', 'local'],
    );
    b.read((tx) => tx.tasks.count());
    await Promise.resolve();
    assert.equal(seen.length, 3, 'nothing new, no event');
  });

  it('breaks a lock left by a dead process at once, and reports it', async () => {
    const store = await openStore();
    const lockFile = `${file}.lock`;
    writeFileSync(lockFile, JSON.stringify({ token: 'ghost', pid: deadPid(), hostname: hostname(), acquiredAt: 0 }));
    await store.mutate((tx) => tx.tasks.insert(input('after-crash')));
    assert.ok(store.notices.some((n) => n.kind === 'stale-lock-broken' && /not running/.test(n.message)));
    assert.equal(existsSync(lockFile), false, 'released after the write');
  });

  it('breaks an ownerless lock file (writer died between create and write) once it is a few seconds old', async () => {
    const store = await openStore();
    const lockFile = `${file}.lock`;
    writeFileSync(lockFile, '');
    const old = new Date(Date.now() - 5000);
    utimesSync(lockFile, old, old);
    await store.mutate((tx) => tx.tasks.insert(input('x')));
    assert.ok(store.notices.some((n) => n.kind === 'stale-lock-broken' && /no owner/.test(n.message)));
  });

  it('waits for a live lock, takes it over only once its heartbeat is older than staleMs, and times out with a typed error', async () => {
    const owner = `${file}.lock`;
    const store = await openStore({ lock: { staleMs: 400, acquireTimeoutMs: 5000 } });
    // a live owner on another host: only the heartbeat age can make it stale
    writeFileSync(owner, JSON.stringify({ token: 'remote', pid: 1, hostname: 'another-host', acquiredAt: Date.now() }));
    await store.mutate((tx) => tx.tasks.insert(input('late')));
    const broken = store.notices.filter((n) => n.kind === 'stale-lock-broken');
    assert.equal(broken.length, 1);
    const waited = Number(/no heartbeat for (\d+) ms/.exec(broken[0].message)?.[1]);
    // The notice rounds the age to whole ms; the lock itself requires age > staleMs.
    assert.ok(waited >= 400, `broken only once its heartbeat was older than staleMs (${broken[0].message})`);
    const impatient = await openStore({ lock: { staleMs: 60_000, acquireTimeoutMs: 150 } });
    writeFileSync(owner, JSON.stringify({ token: 'remote2', pid: 1, hostname: 'another-host', acquiredAt: Date.now() }));
    const fresh = new Date();
    utimesSync(owner, fresh, fresh);
    await assert.rejects(
      impatient.mutate((tx) => tx.tasks.insert(input('never'))),
      (e: unknown) => e instanceof StoreError && e.code === 'LOCK_TIMEOUT',
    );
    rmSync(owner, { force: true });
    assert.equal(
      impatient.read((tx) => tx.tasks.get('never')),
      undefined,
      'nothing half-written',
    );
  });

  it('a write whose lock was taken over before the persist is not persisted but retried, and nothing is lost', async () => {
    const store = await openStore();
    const other = await openStore();
    let attempts = 0;
    await store.mutate((tx) => {
      attempts += 1;
      if (attempts === 1) {
        // Simulate another window that judged us stale: it breaks our lock, writes, and dies holding it.
        writeFileSync(`${file}.lock`, JSON.stringify({ token: 'thief', pid: deadPid(), hostname: hostname(), acquiredAt: 0 }));
      }
      tx.tasks.insert(input(`mine-${attempts}`));
    });
    assert.equal(attempts, 2, 'the mutation ran again after reloading');
    assert.ok(store.notices.some((n) => n.kind === 'lock-compromised'));
    assert.deepEqual(
      other.read((tx) => tx.tasks.list().map((t) => t.id)),
      ['mine-2'],
    );
  });

  it('a heartbeat that finds its lock taken over marks the handle compromised and reports it, without throwing', async () => {
    const notices: StoreNotice[] = [];
    const lock = new FileLock(path.join(dir, 'x.lock'), { staleMs: 200, heartbeatMs: 20, onNotice: (n) => notices.push(n) });
    const handle = await lock.acquire();
    assert.equal(handle.isHeld(), true);
    writeFileSync(path.join(dir, 'x.lock'), JSON.stringify({ token: 'someone-else', pid: process.pid, hostname: 'h', acquiredAt: 0 }));
    await until(() => handle.compromised);
    assert.equal(handle.isHeld(), false);
    assert.equal(notices[0]?.kind, 'lock-compromised');
    handle.release(); // must not remove someone else's lock
    assert.equal(existsSync(path.join(dir, 'x.lock')), true);
  });

  it('cleans up temp files and lock leftovers of crashed writers at open', async () => {
    await (await openStore()).mutate((tx) => tx.tasks.insert(input('a')));
    const old = new Date(Date.now() - 3600_000);
    const leftovers = [`${file}.99999.1.tmp`, `${file}.lock.stale-0b0e6a5e-1111-2222-3333-444455556666`];
    writeFileSync(leftovers[0], 'partial');
    writeFileSync(leftovers[1], '{}');
    for (const f of leftovers) utimesSync(f, old, old);
    const young = `${file}.99999.2.tmp`;
    writeFileSync(young, 'in flight');
    await openStore();
    assert.deepEqual(
      leftovers.map((f) => existsSync(f)),
      [false, false],
    );
    assert.equal(existsSync(young), true, 'a temp file that may belong to a live writer is left alone');
  });

  it('a database file or directory deleted while open is written back from memory at the next change', async () => {
    const store = await openStore();
    await store.mutate((tx) => tx.tasks.insert(input('before')));
    rmSync(dir, { recursive: true, force: true });
    assert.deepEqual(
      store.read((tx) => tx.tasks.list().map((t) => t.id)),
      ['before'],
      'reads keep the last copy',
    );
    await store.mutate((tx) => tx.tasks.insert(input('after')));
    const other = await openStore();
    assert.deepEqual(
      other.read((tx) => tx.tasks.list().map((t) => t.id)),
      ['before', 'after'],
    );
  });

  it('refuses use after close with a typed error', async () => {
    const store = await openStore();
    await store.close();
    assert.throws(
      () => store.read((tx) => tx.tasks.count()),
      (e: unknown) => e instanceof StoreError && e.code === 'CLOSED',
    );
    await assert.rejects(
      store.mutate((tx) => tx.tasks.count()),
      (e: unknown) => e instanceof StoreError && e.code === 'CLOSED',
    );
  });

  // ---- store v3: the lease file, writes only on change, change topics, integrity-checked reloads, disk errors, file modes

  it("the lease lives in tasks-index.lease: acquiring never rewrites the DB file, renewing only sets the lease file's mtime, a follower's check writes nothing", async () => {
    const clock = new ManualClock(1_000_000);
    const a = await openStore({ clock });
    const b = await openStore({ clock });
    const generation = readGeneration(file);
    const bytes = fs.readFileSync(file);
    const persistsAtOpen = a.stats.persists + b.stats.persists;
    const first = await a.acquireLease('leader', 'A', 3000);
    assert.ok(first.held && first.acquired);
    const leaseFile = path.join(dir, 'tasks-index.lease');
    const leaseBytes = fs.readFileSync(leaseFile);
    const leaseInode = fs.statSync(leaseFile).ino;
    for (let i = 0; i < 20; i++) {
      clock.advance(1000);
      assert.ok((await a.acquireLease('leader', 'A', 3000)).held);
      const refused = await b.acquireLease('leader', 'B', 3000);
      assert.ok(!refused.held && refused.current?.holder === 'A');
    }
    assert.equal(b.stats.leaseWrites + b.stats.leaseRenewals, 0, 'the follower only read the lease file');
    assert.deepEqual([a.stats.leaseWrites, a.stats.leaseRenewals], [1, 20], 'one new holding, then renewals');
    assert.ok(
      fs.readFileSync(leaseFile).equals(leaseBytes) && fs.statSync(leaseFile).ino === leaseInode,
      'a renewal writes no data: only the mtime moves',
    );
    assert.equal(fs.statSync(leaseFile).mtimeMs, clock.now());
    assert.equal(readGeneration(file), generation);
    assert.ok(fs.readFileSync(file).equals(bytes), 'the DB file is byte for byte the same');
    assert.equal(a.stats.persists + b.stats.persists, persistsAtOpen);
    assert.equal(b.stats.reloads, 0);
    assert.equal(b.readLease('leader')?.holder, 'A');
    clock.advance(3001);
    const taken = await b.acquireLease('leader', 'B', 3000);
    assert.ok(taken.held && taken.acquired, 'an expired lease is taken over');
    assert.equal((await a.renewLease('leader', first.lease.token, 3000)).held, false);
  });

  it('a holder checking its lease every few seconds touches the lease file only once a third of the ttl has passed', async () => {
    const clock = new ManualClock(5_000_000);
    const store = await openStore({ clock });
    const first = await store.acquireLease('leader', 'A', 30_000);
    assert.ok(first.held);
    for (let i = 0; i < 9; i++) {
      clock.advance(1000);
      const again = await store.acquireLease('leader', 'A', 30_000);
      assert.ok(again.held && again.lease.token === first.lease.token);
    }
    assert.equal(store.stats.leaseRenewals, 0, 'nothing written while two thirds of the ttl remain');
    clock.advance(1000);
    const renewed = await store.acquireLease('leader', 'A', 30_000);
    assert.ok(renewed.held && renewed.lease.expiresAt === clock.now() + 30_000);
    assert.equal(store.stats.leaseRenewals, 1);
  });

  it("a lease whose holder process is gone is taken at once, before its ttl runs out; a live holder's is not", async () => {
    const clock = new ManualClock(5_000_000);
    let alive = true;
    const holderProcess = await openStore({ clock });
    const held = await holderProcess.acquireLease('leader', 'A', 600_000);
    assert.ok(held.held);
    // the lease file names this test process; pretend it belongs to another process on this host
    const leaseFile = path.join(dir, 'tasks-index.lease');
    const content = JSON.parse(readFileSync(leaseFile, 'utf8')) as Record<string, unknown>;
    writeFileSync(leaseFile, JSON.stringify({ ...content, pid: deadPid() }));
    fs.utimesSync(leaseFile, clock.now() / 1000, clock.now() / 1000);
    const other = await openStore({ clock, lock: { isProcessAlive: () => alive } });
    assert.equal((await other.acquireLease('leader', 'B', 600_000)).held, false, 'a live holder keeps it');
    alive = false;
    clock.advance(1000);
    const taken = await other.acquireLease('leader', 'B', 600_000);
    assert.ok(taken.held && taken.acquired, 'the orphaned lease is taken 1 s in, not after 10 min');
  });

  it('a window registration, a backoff record or a runtime record writes only when its content changes', async () => {
    const store = await openStore();
    const window = { windowId: 'w1', workspaceKeys: ['/a'], pid: 7, host: 'h' };
    assert.equal(await store.mutate((tx) => tx.windows.register(window)), true);
    const persists = store.stats.persists;
    assert.equal(await store.mutate((tx) => tx.windows.register(window)), false);
    assert.equal(await store.mutate((tx) => tx.dispatch.clear('nobody')), false);
    await store.mutate((tx) => tx.tasks.insert(paddedInput('t')));
    assert.equal(await store.mutate((tx) => tx.runtime.recordFirstStart({ taskId: 't', agent: 'reference', baseCommit: null })), true);
    const afterRecord = store.stats.persists;
    assert.equal(await store.mutate((tx) => tx.runtime.recordFirstStart({ taskId: 't', agent: 'claude-code', baseCommit: 'x' })), false);
    assert.equal(store.stats.persists, afterRecord, 'unchanged: nothing written');
    assert.equal(afterRecord, persists + 2);
    assert.equal(store.read((tx) => tx.runtime.get('t'))?.agent, 'reference', 'the first record is kept');
    assert.equal(await store.mutate((tx) => tx.windows.register({ ...window, workspaceKeys: ['/a', '/b'] })), true);
  });

  it('change events name the topics that changed, locally and in another window', async () => {
    const a = await openStore();
    const b = await openStore();
    const local: StoreChange[] = [];
    const external: StoreChange[] = [];
    a.onDidChange((c) => local.push(c));
    b.onDidChange((c) => external.push(c));
    const topics = (list: StoreChange[]) => list.map((c) => [...c.topics].sort().join('+'));
    await a.mutate((tx) => tx.tasks.insert(paddedInput('t1')));
    await a.mutate((tx) => tx.windows.register({ windowId: 'w', workspaceKeys: [], pid: 1, host: 'h' }));
    await a.mutate((tx) => tx.dispatch.recordFailure('t1', 'no window', () => 1000));
    await a.mutate((tx) => {
      tx.tickets.insert({ ticketId: 'k1', taskId: 't1', serverState: 'queued' });
      tx.tasks.setTicket('t1', 'k1');
    });
    await Promise.resolve();
    assert.deepEqual(topics(local), ['tasks', 'windows', 'dispatch', 'tasks+tickets']);
    b.read((tx) => tx.tasks.count());
    await a.mutate((tx) => tx.windows.register({ windowId: 'w', workspaceKeys: ['/x'], pid: 1, host: 'h' }));
    b.read((tx) => tx.tasks.count());
    await Promise.resolve();
    assert.deepEqual(
      topics(external),
      ['dispatch+tasks+tickets+windows', 'windows'],
      'a reload reports what differs from the copy it replaced',
    );
    assert.deepEqual(
      external.map((c) => c.origin),
      ['external', 'external'],
    );
  });

  it('a reload runs the integrity check: a file damaged beyond page 1 by another writer is not loaded, and the next write moves it aside', async () => {
    const a = await openStore();
    const b = await openStore();
    await a.batch(
      Array.from(
        { length: 200 },
        (_, i) => (tx: Parameters<Parameters<TaskStore['mutate']>[0]>[0]) => tx.tasks.insert(paddedInput(`t${i}`)),
      ),
    );
    assert.equal(
      b.read((tx) => tx.tasks.count()),
      200,
    );
    const reloads = b.stats.reloads;
    // page 1 (header and schema) intact, a new change counter, the rest scribbled over
    const bytes = fs.readFileSync(file);
    const pageSize = bytes.readUInt16BE(16);
    bytes.fill(0x5a, pageSize * 2, bytes.length - pageSize);
    bytes.writeUInt32BE(bytes.readUInt32BE(24) + 5, 24);
    bytes.writeUInt32BE(bytes.readUInt32BE(24), 92);
    fs.writeFileSync(file, bytes);
    assert.equal(
      b.read((tx) => tx.tasks.count()),
      200,
      'reads keep serving the last good copy',
    );
    assert.equal(b.stats.reloads, reloads, 'the damaged file was not loaded');
    await b.mutate((tx) => tx.tasks.insert(paddedInput('after')));
    const notice = b.notices.find((n) => n.kind === 'corrupt-moved-aside');
    assert.ok(notice && notice.kind === 'corrupt-moved-aside' && /integrity|malformed/.test(notice.reason), JSON.stringify(b.notices));
    assert.equal(
      a.read((tx) => tx.tasks.count()),
      201,
      'the last good copy came back with the new change',
    );
  });

  it('EBUSY while reading the file is retried, not taken for corruption: the change is saved and nothing is moved aside', async () => {
    const a = await openStore();
    await a.mutate((tx) => tx.tasks.insert(paddedInput('from-a')));
    let busy = 3;
    const flaky: StoreFs = {
      ...fs,
      readFileSync: ((...args: Parameters<typeof fs.readFileSync>) => {
        if (busy-- > 0) throw errno('EBUSY', 'read');
        return fs.readFileSync(...args);
      }) as typeof fs.readFileSync,
    };
    const b = await openStore({ fs: flaky, ioRetry: { attempts: 6, baseDelayMs: 1 } });
    await a.mutate((tx) => tx.tasks.insert(paddedInput('second')));
    busy = 3;
    await b.mutate((tx) => tx.tasks.insert(paddedInput('from-b')));
    assert.ok(b.stats.ioRetries >= 3);
    assert.deepEqual(b.notices, []);
    assert.deepEqual(
      fs.readdirSync(dir).filter((n) => n.includes('corrupt')),
      [],
    );
    assert.deepEqual(
      a.read((tx) => tx.tasks.list().map((t) => t.id)),
      ['from-a', 'second', 'from-b'],
    );
  });

  it('a disk that keeps failing: the mutation fails with StoreError IO, the file is untouched, memory keeps no trace, one notice', async () => {
    let failing = false;
    const disk: StoreFs = {
      ...fs,
      renameSync: ((from: fs.PathLike, to: fs.PathLike) => {
        if (failing) throw errno('EIO', 'rename');
        fs.renameSync(from, to);
      }) as typeof fs.renameSync,
    };
    const store = await openStore({ fs: disk, ioRetry: { attempts: 3, baseDelayMs: 1 } });
    await store.mutate((tx) => tx.tasks.insert(paddedInput('kept')));
    const before = fs.readFileSync(file);
    failing = true;
    await assert.rejects(
      store.mutate((tx) => tx.tasks.insert(paddedInput('lost'))),
      (e: unknown) => e instanceof StoreError && e.code === 'IO' && /EIO/.test(e.message),
    );
    await assert.rejects(
      store.mutate((tx) => tx.tasks.pause('kept')),
      (e: unknown) => e instanceof StoreError && e.code === 'IO',
    );
    assert.ok(fs.readFileSync(file).equals(before), 'the file on disk is exactly the last acknowledged version');
    assert.deepEqual(
      store.read((tx) => tx.tasks.list().map((t) => [t.id, t.status])),
      [['kept', 'queued']],
      'memory went back too',
    );
    assert.deepEqual(
      store.notices.map((n) => n.kind),
      ['io-error'],
      'one notice for a burst of failures',
    );
    assert.deepEqual(
      fs.readdirSync(dir).filter((n) => n.includes('corrupt') || n.endsWith('.tmp')),
      [],
    );
    failing = false;
    await store.mutate((tx) => tx.tasks.insert(paddedInput('later')));
    assert.deepEqual(
      store.read((tx) => tx.tasks.list().map((t) => t.id)),
      ['kept', 'later'],
    );
  });

  it('deleting a task drops what other parts kept about it (backoff, runtime record, hand-off request); the ledger stays', async () => {
    const store = await openStore();
    await store.mutate((tx) => {
      tx.tickets.insert({ ticketId: 'k', taskId: 'gone', serverState: 'queued' });
      tx.tasks.insert({ ...paddedInput('gone'), serverTicketId: 'k' });
      tx.dispatch.recordFailure('gone', 'x', () => 1);
      tx.runtime.recordFirstStart({ taskId: 'gone', agent: 'reference', baseCommit: null });
      tx.windows.requestHandOff('gone', 'w2');
    });
    assert.equal(await store.mutate((tx) => tx.tasks.cancel('gone') && tx.tasks.delete('gone')), true);
    assert.deepEqual(
      store.read((tx) => [
        tx.dispatch.get('gone'),
        tx.runtime.get('gone'),
        tx.windows.pendingHandOffs('w2'),
        tx.tickets.forTask('gone').length,
      ]),
      [undefined, undefined, [], 1],
    );
  });

  it('creates its directory 0700 and its files (DB, lease) 0600', async () => {
    const storage = path.join(dir, 'storage');
    const store = await openStore({ directory: storage });
    const dbFile = path.join(storage, 'tasks-index.sqlite');
    await store.acquireLease('leader', 'A', 1000);
    const mode = (p: string) => (fs.statSync(p).mode & 0o777).toString(8);
    assert.deepEqual([mode(storage), mode(dbFile), mode(path.join(storage, 'tasks-index.lease'))], ['700', '600', '600']);
  });
});
