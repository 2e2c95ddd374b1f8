/**
 * Item 3 of the platform guarantees (docs/platforms.md): every file the product replaces (the
 * task DB, the lease, the archive, authority.json) is replaced under Windows' sharing rules too.
 * "(Windows sharing rules injected)" tests run everywhere with test/fixtures/windows-sharing-fs.ts;
 * "(this platform's own rules)" tests use node:fs as it is, so in the Windows lane
 * (.ci/windows-lane.sh) they run under Windows' real rules.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { systemClock } from '../../src/core/clock';
import { ArchiveFile, TaskStore, type StoreFs } from '../../src/store';
import { generationMarkerFor } from '../../src/store/db/db-file';
import { writeFileAtomic } from '../../src/files/file-replace';
import { narrowPrivateTree } from '../../src/files/private-files';
import { windowsSharingFs } from '../fixtures/windows-sharing-fs';

const input = (id: string) => ({ id, title: id, prompt: `prompt ${id}`, permissionMode: 'default' as const, workspacePath: '/w' });
const HOLD_MS = 1500;

describe("platform: files replaced under every platform's sharing rules", () => {
  let dir: string;
  const open: Array<{ close(): Promise<void> }> = [];
  const openStore = async (fsys?: StoreFs) => {
    const store = await TaskStore.open({ directory: dir, clock: systemClock, durable: false, watch: false, fs: fsys });
    open.push(store);
    return store;
  };
  /** What another window reading the file now would find there. */
  const tasksOnDisk = async () => {
    const other = await openStore();
    return other.read((tx) => tx.tasks.list({}).map((t) => t.id)).sort();
  };

  beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'offpeak-platform-files-'))));
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it(`platform: a DB held open by another handle for ${HOLD_MS / 1000} s: the write waits and succeeds (Windows sharing rules injected)`, async () => {
    const sharing = windowsSharingFs();
    const store = await openStore(sharing.fs);
    await store.mutate((tx) => tx.tasks.insert(input('a')));
    const release = sharing.hold(store.filePath);
    let released = false;
    setTimeout(() => {
      released = true;
      release();
    }, HOLD_MS);
    await store.mutate((tx) => tx.tasks.insert(input('b')));
    assert.ok(released, 'the write finished only once the other handle was closed');
    assert.ok(sharing.refusedRenames > 0, 'the rename met the held file');
    assert.equal(store.stats.renameWaits, 1);
    assert.equal(store.stats.ioFailures, 0, 'no I/O failure reported');
    assert.deepEqual(await tasksOnDisk(), ['a', 'b']);
  });

  it(`platform: a DB held open by another handle for ${HOLD_MS / 1000} s: the write waits and succeeds (this platform's own rules)`, async () => {
    const store = await openStore();
    await store.mutate((tx) => tx.tasks.insert(input('a')));
    const fd = fs.openSync(store.filePath, 'r');
    const closer = setTimeout(() => fs.closeSync(fd), HOLD_MS);
    try {
      await store.mutate((tx) => tx.tasks.insert(input('b')));
    } finally {
      clearTimeout(closer);
      try {
        fs.closeSync(fd);
      } catch {
        // closed by the timer
      }
    }
    assert.equal(store.stats.ioFailures, 0);
    assert.deepEqual(await tasksOnDisk(), ['a', 'b']);
  });

  it('platform: reads look at the generation marker, never at the DB file, while nobody writes (Windows sharing rules injected)', async () => {
    const sharing = windowsSharingFs();
    const writer = await openStore();
    await writer.mutate((tx) => tx.tasks.insert(input('a')));
    const reader = await openStore(sharing.fs);
    const dbName = path.basename(reader.filePath);
    sharing.opens.clear();
    for (let i = 0; i < 50; i++) reader.read((tx) => tx.tasks.count());
    for (let i = 0; i < 50; i++) reader.checkForExternalChange();
    assert.equal(sharing.opens.get(dbName) ?? 0, 0, 'no open of the DB file');
    assert.equal(sharing.opens.get(path.basename(generationMarkerFor(reader.filePath))), 100, 'one look at the marker per read');
    // Another window's write is still seen at the next read.
    await writer.mutate((tx) => tx.tasks.insert(input('b')));
    assert.equal(
      reader.read((tx) => tx.tasks.count()),
      2,
    );
  });

  it('platform: a folder at the DB path is moved aside (Windows: a folder opens like a file and reads size 0; injected)', async () => {
    const sharing = windowsSharingFs();
    fs.mkdirSync(path.join(dir, 'tasks-index.sqlite'));
    const store = await openStore(sharing.fs);
    await store.mutate((tx) => tx.tasks.insert(input('a')));
    assert.ok(fs.statSync(store.filePath).isFile(), 'a database file is there now');
    assert.deepEqual(
      store.notices.map((n) => n.kind),
      ['corrupt-moved-aside'],
    );
    assert.ok(
      fs.readdirSync(dir).some((name) => name.startsWith('tasks-index.sqlite.corrupt-') && fs.statSync(path.join(dir, name)).isDirectory()),
      'the folder kept aside',
    );
  });

  it("platform: a folder at the DB path is moved aside (this platform's own rules)", async () => {
    fs.mkdirSync(path.join(dir, 'tasks-index.sqlite'));
    const store = await openStore();
    await store.mutate((tx) => tx.tasks.insert(input('a')));
    assert.ok(fs.statSync(store.filePath).isFile());
    assert.deepEqual(
      store.notices.map((n) => n.kind),
      ['corrupt-moved-aside'],
    );
  });

  it(`platform: a lease file held open by another handle for ${HOLD_MS / 1000} s: taking the lease waits and succeeds (Windows sharing rules injected)`, async () => {
    const sharing = windowsSharingFs();
    const store = await openStore(sharing.fs);
    const first = await store.acquireLease('leader', 'window-1', 60_000);
    assert.ok(first.held);
    await store.releaseLease('leader', first.lease.token);
    fs.writeFileSync(store.leasePath, ''); // an empty lease file: free, replaced on take
    const release = sharing.hold(store.leasePath);
    let released = false;
    setTimeout(() => {
      released = true;
      release();
    }, HOLD_MS);
    const taken = await store.acquireLease('leader', 'window-2', 60_000);
    assert.ok(released && taken.held && taken.acquired);
    assert.equal(store.readLease('leader')?.holder, 'window-2');
  });

  it(`platform: the archive held open by another handle for ${HOLD_MS / 1000} s: its write waits and succeeds (Windows sharing rules injected)`, async () => {
    const sharing = windowsSharingFs();
    const archive = await ArchiveFile.open({ directory: dir, durable: false, fs: sharing.fs });
    open.push(archive);
    const schema = (await openStore()).read((tx) => tx.archive.schema());
    const meta = (value: string) => archive.put(schema, new Map(), { last_run_at: value });
    await meta('1');
    const release = sharing.hold(archive.filePath);
    let released = false;
    setTimeout(() => {
      released = true;
      release();
    }, HOLD_MS);
    await meta('2');
    assert.ok(released && sharing.refusedRenames > 0);
    archive.unload();
    assert.equal(archive.meta('last_run_at'), '2');
  });

  it('platform: a file written once at start (authority.json) waits, blocking, for a held file (Windows sharing rules injected)', () => {
    const sharing = windowsSharingFs();
    const file = path.join(dir, 'authority.json');
    fs.writeFileSync(file, '{"old":true}');
    const release = sharing.hold(file);
    // The sync form cannot let a timer run: the other handle goes after three refused renames.
    const fsys: StoreFs = {
      ...sharing.fs,
      renameSync: (from, to) => {
        if (sharing.refusedRenames >= 3) release();
        sharing.fs.renameSync(from, to);
      },
    };
    assert.equal(writeFileAtomic(file, Buffer.from('{"new":true}'), { durable: false, fs: fsys }), true);
    assert.equal(sharing.refusedRenames, 3);
    assert.equal(fs.readFileSync(file, 'utf8'), '{"new":true}');
  });

  it('platform: a rename that stays refused gives up after its budget and leaves the file as it was (Windows sharing rules injected)', async () => {
    const sharing = windowsSharingFs();
    const store = await TaskStore.open({
      directory: dir,
      clock: systemClock,
      durable: false,
      watch: false,
      fs: sharing.fs,
      ioRetry: { attempts: 1 },
    });
    open.push(store);
    await store.mutate((tx) => tx.tasks.insert(input('a')));
    const release = sharing.hold(store.filePath);
    try {
      await assert.rejects(
        store.mutate((tx) => tx.tasks.insert(input('b'))),
        (err: Error & { code?: string }) => err.code === 'IO' && /EPERM on rename/.test(err.message),
      );
    } finally {
      release();
    }
    assert.deepEqual(
      store.read((tx) => tx.tasks.list({}).map((t) => t.id)),
      ['a'],
      'memory went back to the file',
    );
    assert.deepEqual(await tasksOnDisk(), ['a']);
    assert.ok(!fs.readdirSync(dir).some((name) => name.endsWith('.tmp')), 'no temp file left');
  });
});

describe('platform: private folders narrowed where modes mean something, never into worktrees', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(path.join(tmpdir(), 'offpeak-platform-modes-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const layout = () => {
    fs.mkdirSync(path.join(root, 'runtime'), { mode: 0o755 });
    fs.writeFileSync(path.join(root, 'runtime', 'prompt.txt'), 'p', { mode: 0o644 });
    fs.mkdirSync(path.join(root, 'worktrees', 'fix-1', 'src'), { recursive: true, mode: 0o755 });
    fs.writeFileSync(path.join(root, 'worktrees', 'fix-1', 'src', 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    fs.chmodSync(path.join(root, 'runtime'), 0o755);
    fs.chmodSync(path.join(root, 'worktrees', 'fix-1'), 0o755);
  };
  const mode = (...parts: string[]) => fs.statSync(path.join(root, ...parts)).mode & 0o777;

  it('platform: the walk narrows globalStorage but leaves task worktrees as git made them (POSIX only: modes mean nothing on Windows, twin below)', () => {
    layout();
    narrowPrivateTree(root, { skip: [path.join(root, 'worktrees')] });
    assert.equal(mode('runtime'), 0o700);
    assert.equal(mode('runtime', 'prompt.txt'), 0o600);
    assert.equal(mode('worktrees', 'fix-1'), 0o755, 'the worktree folder untouched');
    assert.equal(mode('worktrees', 'fix-1', 'src', 'run.sh'), 0o755, 'a file in the worktree untouched');
  });

  it('platform: no walk at all on Windows (injected platform)', () => {
    layout();
    assert.equal(narrowPrivateTree(root, { platform: 'win32' }), 0);
    if (process.platform !== 'win32') assert.equal(mode('runtime', 'prompt.txt'), 0o644, 'nothing changed');
  });
});
