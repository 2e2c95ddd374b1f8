// A task starts from what the user sees, or says why not (docs/flows.md#isolation, #checks): queueing
// a task on its own branch while the folder has uncommitted changes says first that it starts from
// the last commit and which files it will not see; a check that fails because a file it needs is
// only uncommitted in the folder says so in its round's output. Real git repository and worktree,
// real sql.js store, real check command; the VS Code dialog is a recording fixture of the host.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AskBroker } from '../../src/agent/questions/asks';
import { guardCheck } from '../../src/agent/runtime/check-guards';
import { SegmentWork, segmentCheckOf } from '../../src/agent/runtime/segment-work';
import { uncommittedFiles } from '../../src/agent/workplace/folder-status';
import { createTaskWorktree, worktreeFit } from '../../src/agent/workplace/task-worktree';
import { systemClock } from '../../src/core/clock';
import type { Confirmation } from '../../src/panel/confirmations';
import type { PanelHostBits } from '../../src/panel/host-bits';
import { taskHandlers } from '../../src/panel/task-handlers';
import { uncommittedConfirmation } from '../../src/panel/uncommitted-notice';
import { FolderFits } from '../../src/panel/workplace-panel';
import type { TaskService } from '../../src/service';
import { TaskStore } from '../../src/store';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' }).trim();

describe('a task starts from what the user sees, or says why not (issue 39)', function () {
  this.timeout(60_000);
  let root: string;
  let repo: string;

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-uncommitted-'));
    repo = path.join(root, 'repo');
    fs.mkdirSync(repo);
    fs.writeFileSync(path.join(repo, 'a.txt'), 'one\n');
    git(repo, 'init', '-q');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'init');
  });

  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('item 4: queueing an own-branch task with uncommitted changes says first that it starts from the last commit and names the files', async () => {
    fs.writeFileSync(path.join(repo, 'a.txt'), 'two\n');
    fs.mkdirSync(path.join(repo, 'scripts'));
    fs.writeFileSync(path.join(repo, 'scripts', 'check.sh'), 'exit 0\n');
    assert.deepEqual(await uncommittedFiles(repo), ['a.txt', 'scripts/check.sh']);

    const asked: Confirmation[] = [];
    let answer: 'action' | 'alternative' | undefined;
    const created: { isolation?: string }[] = [];
    const host = {
      workspaces: () => [{ name: 'repo', path: repo, identity: null }],
      isolation: () => 'worktree',
      confirm: async () => true,
      confirmWithAlternative: async (q: Confirmation) => (asked.push(q), answer),
    } as unknown as PanelHostBits;
    const service = { create: async (input: { isolation?: string }) => (created.push(input), { id: `task-${created.length}` }) };
    const handlers = taskHandlers({
      service: service as unknown as TaskService,
      store: undefined as never,
      host,
      archive: undefined,
      folderFits: new FolderFits((folder) => worktreeFit(folder)),
      refresh: async () => undefined,
      uncommitted: uncommittedFiles,
    });
    const form = { title: 't', prompt: 'p', workspacePath: repo, permissionMode: 'acceptEdits' as const, model: null, thoughtLevel: null };

    // Cancel ("commit first"): nothing is queued.
    answer = undefined;
    assert.deepEqual(await handlers.createTask({ input: { ...form, ownBranch: true } }), { taskId: null });
    assert.equal(created.length, 0);
    assert.equal(asked[0].message, 'The task starts from the last commit: it will not see 2 uncommitted files.');
    assert.match(asked[0].detail, /\n {2}a\.txt\n {2}scripts\/check\.sh\n/);
    assert.deepEqual([asked[0].action, asked[0].alternative], ['Queue from Last Commit', 'Run in the Folder Instead']);

    // The offer in place: queued to run in the folder itself.
    answer = 'alternative';
    await handlers.createTask({ input: { ...form, ownBranch: true } });
    assert.equal(created.at(-1)?.isolation, 'inPlace');
    answer = 'action';
    await handlers.createTask({ input: { ...form, ownBranch: true } });
    assert.equal(created.at(-1)?.isolation, 'worktree');

    // In place, or nothing uncommitted: no notice.
    const before = asked.length;
    await handlers.createTask({ input: { ...form, ownBranch: false } });
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'all');
    await handlers.createTask({ input: { ...form, ownBranch: true } });
    assert.equal(asked.length, before);
    assert.equal(uncommittedConfirmation([]), undefined);
  });

  it('item 4: a check that fails because its script is only uncommitted in the folder says so in the round output', async () => {
    const made = await createTaskWorktree({ folder: repo, worktreesDir: path.join(root, 'wt'), taskId: 'task-1234', title: 't' });
    assert.equal(made.kind, 'created');
    if (made.kind !== 'created') return;
    // Written after the worktree was made from the last commit, never committed.
    fs.mkdirSync(path.join(repo, 'scripts'));
    fs.writeFileSync(path.join(repo, 'scripts', 'check.sh'), 'exit 0\n');
    const store = await TaskStore.open({ directory: path.join(root, 'db'), clock: systemClock, durable: false, watch: false });
    await store.mutate((tx) => {
      tx.tasks.insert({
        id: 'T',
        title: 't',
        prompt: 'p',
        permissionMode: 'plan',
        workspacePath: repo,
        serverTicketId: 'K',
        schedulable: true,
      });
      tx.checks.insert('T', 'sh scripts/check.sh', 'key');
      tx.checks.record('T', { state: 'checking', round: 1 });
    });
    const { check } = segmentCheckOf(store, 'T', 'K', made.worktreePath, systemClock, { timeoutMs: () => 30_000, maxRounds: () => 1 });
    assert.ok(check);
    check.segmentOver = () => false;
    const asks = new AskBroker({ clock: systemClock, timeoutMs: () => 60_000 });
    guardCheck(check, { store, taskId: 'T', permissionMode: 'plan', folder: repo, asks });
    const work = new SegmentWork({
      first: null,
      check,
      resume: () => Promise.reject(new Error('no fix round')),
      segmentDir: path.join(root, 'seg'),
      sessionId: 's',
      taskId: 'T',
    });
    const shown: string[] = [];
    work.attach({ write: (t) => shown.push(t) });
    assert.deepEqual(await work.done, { kind: 'completed', summary: '', exitCode: 0, check: { passed: false, round: 1 } });
    const row = store.read((tx) => tx.checks.get('T'))!;
    assert.equal(row.state, 'failed');
    const note =
      "[off-peak] scripts/check.sh exists in your folder but is not committed, so this task's worktree (made from the last commit) " +
      'does not have it: the check cannot pass here. Commit it and follow up, or run the task in the folder itself.';
    assert.ok(row.output?.includes(note), `the round's output says why: ${row.output}`);
    assert.ok(shown.join('').includes(note), 'and the terminal');
  });
});
