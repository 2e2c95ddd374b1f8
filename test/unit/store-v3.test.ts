/** Store v3: the lease file, writes only on change, change topics, integrity-checked reloads, I/O errors vs corruption, file modes. */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import { StoreError, TaskStore, type StoreChange, type StoreFs } from '../../src/store';
import { readGeneration } from '../../src/store/db-file';

const input = (id: string) => ({ id, title: id, prompt: `prompt ${id} `.padEnd(300, '.'), permissionMode: 'default' as const, workspacePath: '/w' });
const errno = (code: string, syscall: string) => Object.assign(new Error(`${code}: test fault, ${syscall}`), { code, syscall });

describe('store v3', () => {
  let dir: string;
  let file: string;
  const open: TaskStore[] = [];
  const openStore = async (opts: Partial<Parameters<typeof TaskStore.open>[0]> = {}) => {
    const s = await TaskStore.open({ directory: dir, watch: false, ...opts });
    open.push(s);
    return s;
  };
  beforeEach(() => {
    dir = path.join(fs.mkdtempSync(path.join(tmpdir(), 'offpeak-store-v3-')), 'storage');
    file = path.join(dir, 'tasks-index.sqlite');
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  });

  it('the lease lives in tasks-index.lease: acquiring never rewrites the DB file, renewing only sets the lease file\'s mtime, a follower\'s check writes nothing', async () => {
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
    assert.ok(fs.readFileSync(leaseFile).equals(leaseBytes) && fs.statSync(leaseFile).ino === leaseInode, 'a renewal writes no data: only the mtime moves');
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

  it('a window registration, a backoff record or a runtime record writes only when its content changes', async () => {
    const store = await openStore();
    const window = { windowId: 'w1', workspaceKeys: ['/a'], pid: 7, host: 'h' };
    assert.equal(await store.mutate((tx) => tx.windows.register(window)), true);
    const persists = store.stats.persists;
    assert.equal(await store.mutate((tx) => tx.windows.register(window)), false);
    assert.equal(await store.mutate((tx) => tx.dispatch.clear('nobody')), false);
    await store.mutate((tx) => tx.tasks.insert(input('t')));
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
    await a.mutate((tx) => tx.tasks.insert(input('t1')));
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
    assert.deepEqual(topics(external), ['dispatch+tasks+tickets+windows', 'windows'], 'a reload reports what differs from the copy it replaced');
    assert.deepEqual(external.map((c) => c.origin), ['external', 'external']);
  });

  it('a reload runs the integrity check: a file damaged beyond page 1 by another writer is not loaded, and the next write moves it aside', async () => {
    const a = await openStore();
    const b = await openStore();
    await a.batch(Array.from({ length: 200 }, (_, i) => (tx: Parameters<Parameters<TaskStore['mutate']>[0]>[0]) => tx.tasks.insert(input(`t${i}`))));
    assert.equal(b.read((tx) => tx.tasks.count()), 200);
    const reloads = b.stats.reloads;
    // page 1 (header and schema) intact, a new change counter, the rest scribbled over
    const bytes = fs.readFileSync(file);
    const pageSize = bytes.readUInt16BE(16);
    bytes.fill(0x5a, pageSize * 2, bytes.length - pageSize);
    bytes.writeUInt32BE(bytes.readUInt32BE(24) + 5, 24);
    bytes.writeUInt32BE(bytes.readUInt32BE(24), 92);
    fs.writeFileSync(file, bytes);
    assert.equal(b.read((tx) => tx.tasks.count()), 200, 'reads keep serving the last good copy');
    assert.equal(b.stats.reloads, reloads, 'the damaged file was not loaded');
    await b.mutate((tx) => tx.tasks.insert(input('after')));
    const notice = b.notices.find((n) => n.kind === 'corrupt-moved-aside');
    assert.ok(notice && notice.kind === 'corrupt-moved-aside' && /integrity|malformed/.test(notice.reason), JSON.stringify(b.notices));
    assert.equal(a.read((tx) => tx.tasks.count()), 201, 'the last good copy came back with the new change');
  });

  it('EBUSY while reading the file is retried, not taken for corruption: the change is saved and nothing is moved aside', async () => {
    const a = await openStore();
    await a.mutate((tx) => tx.tasks.insert(input('from-a')));
    let busy = 3;
    const flaky: StoreFs = {
      ...fs,
      readFileSync: ((...args: Parameters<typeof fs.readFileSync>) => {
        if (busy-- > 0) throw errno('EBUSY', 'read');
        return fs.readFileSync(...args);
      }) as typeof fs.readFileSync,
    };
    const b = await openStore({ fs: flaky, ioRetry: { attempts: 6, baseDelayMs: 1 } });
    await a.mutate((tx) => tx.tasks.insert(input('second')));
    busy = 3;
    await b.mutate((tx) => tx.tasks.insert(input('from-b')));
    assert.ok(b.stats.ioRetries >= 3);
    assert.deepEqual(b.notices, []);
    assert.deepEqual(fs.readdirSync(dir).filter((n) => n.includes('corrupt')), []);
    assert.deepEqual(a.read((tx) => tx.tasks.list().map((t) => t.id)), ['from-a', 'second', 'from-b']);
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
    await store.mutate((tx) => tx.tasks.insert(input('kept')));
    const before = fs.readFileSync(file);
    failing = true;
    await assert.rejects(store.mutate((tx) => tx.tasks.insert(input('lost'))), (e: unknown) => e instanceof StoreError && e.code === 'IO' && /EIO/.test(e.message));
    await assert.rejects(store.mutate((tx) => tx.tasks.pause('kept')), (e: unknown) => e instanceof StoreError && e.code === 'IO');
    assert.ok(fs.readFileSync(file).equals(before), 'the file on disk is exactly the last acknowledged version');
    assert.deepEqual(store.read((tx) => tx.tasks.list().map((t) => [t.id, t.status])), [['kept', 'queued']], 'memory went back too');
    assert.deepEqual(store.notices.map((n) => n.kind), ['io-error'], 'one notice for a burst of failures');
    assert.deepEqual(fs.readdirSync(dir).filter((n) => n.includes('corrupt') || n.endsWith('.tmp')), []);
    failing = false;
    await store.mutate((tx) => tx.tasks.insert(input('later')));
    assert.deepEqual(store.read((tx) => tx.tasks.list().map((t) => t.id)), ['kept', 'later']);
  });

  it('deleting a task drops what other parts kept about it (backoff, runtime record, hand-off request); the ledger stays', async () => {
    const store = await openStore();
    await store.mutate((tx) => {
      tx.tickets.insert({ ticketId: 'k', taskId: 'gone', serverState: 'queued' });
      tx.tasks.insert({ ...input('gone'), serverTicketId: 'k' });
      tx.dispatch.recordFailure('gone', 'x', () => 1);
      tx.runtime.recordFirstStart({ taskId: 'gone', agent: 'reference', baseCommit: null });
      tx.windows.requestHandOff('gone', 'w2');
    });
    assert.equal(await store.mutate((tx) => tx.tasks.cancel('gone') && tx.tasks.delete('gone')), true);
    assert.deepEqual(store.read((tx) => [tx.dispatch.get('gone'), tx.runtime.get('gone'), tx.windows.pendingHandOffs('w2'), tx.tickets.forTask('gone').length]), [undefined, undefined, [], 1]);
  });

  it('creates its directory 0700 and its files (DB, lease) 0600', async () => {
    const store = await openStore();
    await store.acquireLease('leader', 'A', 1000);
    const mode = (p: string) => (fs.statSync(p).mode & 0o777).toString(8);
    assert.deepEqual([mode(dir), mode(file), mode(path.join(dir, 'tasks-index.lease'))], ['700', '600', '600']);
  });
});
