// Bringing a chain home as one (docs/flows.md#bring-it-home): the steps that continue in one branch
// share one Merge, Apply and Discard, offered on the last step; a discard after a merge or apply
// keeps that record. Real git in a temporary repository, the real sql.js store and the real
// reference gateway (service-harness); the runtime's part of each step (its start in the worktree,
// its edit, its counted changes, its end) is written as the runtime writes it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveWorkplace } from '../../src/agent/workplace/task-workplace';
import { bringHomeHandlers } from '../../src/panel/bring-home-handlers';
import type { Confirmation } from '../../src/panel/confirmations';
import type { PanelHostBits } from '../../src/panel/host-bits';
import { workplaceViews } from '../../src/panel/workplace-panel';
import type { WorkplaceView } from '../../src/protocol/webview';
import { World, taskInput, startRunning, type Window } from './service-harness';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' }).trim();

describe('bringing a chain home as one (docs/flows.md#bring-it-home; real git, real store)', function () {
  this.timeout(120_000);
  let world: World;
  let root: string;
  let repo: string;
  let w: Window;
  let asked: Confirmation[];

  beforeEach(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'chain-home-'));
    repo = path.join(root, 'repo');
    fs.mkdirSync(repo);
    fs.writeFileSync(path.join(repo, 'README.md'), 'hello\n');
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'init');
    world = await World.start();
    w = await world.openWindow('holder');
    asked = [];
  });
  afterEach(async () => {
    await world?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const handlers = () =>
    bringHomeHandlers(
      w.service,
      w.store,
      {
        confirm: async (q: Confirmation) => {
          asked.push(q);
          return true;
        },
      } as unknown as PanelHostBits,
      undefined,
    );
  const views = (): Map<string, WorkplaceView> => w.store.read((tx) => workplaceViews(tx, w.service.listTasks()));

  /** One step, as the runtime runs it: taken, started in its worktree, one file written, its changes counted, completed. */
  async function runStep(taskId: string, file: string): Promise<void> {
    await world.promote();
    await world.advance(15_000);
    await startRunning(w, taskId);
    const task = w.service.getTask(taskId)!;
    const place = await resolveWorkplace(w.store, task, path.join(root, 'worktrees'));
    assert.equal(place.kind, 'ready');
    if (place.kind !== 'ready') return;
    fs.writeFileSync(path.join(place.place.folder, file), `${task.title}\n`);
    await w.store.mutate((tx) =>
      tx.isolation.recordChanges(taskId, [{ path: file, status: 'added', added: 1, removed: 0, oldBlob: null }]),
    );
    assert.ok(await w.service.lifecycle.complete(taskId, {}));
    await world.advance(31_000); // the lease tick sees the change; the next step's chain says go
  }

  async function chainOfThree() {
    const a = await w.service.create(taskInput({ title: 'Step A', workspacePath: repo, isolation: 'worktree' }));
    const b = await w.service.create(
      taskInput({ title: 'Step B', workspacePath: repo, isolation: 'worktree', afterTaskId: a.id, continueInBranch: true }),
    );
    const c = await w.service.create(
      taskInput({ title: 'Step C', workspacePath: repo, isolation: 'worktree', afterTaskId: b.id, continueInBranch: true }),
    );
    await runStep(a.id, 'a.txt');
    assert.equal(views().get(a.id)?.canMerge, false, 'A is not offered Merge while B waits to continue in its branch');
    await runStep(b.id, 'b.txt');
    await runStep(c.id, 'c.txt');
    return { a, b, c };
  }

  it('item 2: a chain A → B → C merged once: one commit naming all steps, every card Merged', async () => {
    const { a, b, c } = await chainOfThree();
    const branch = w.store.read((tx) => tx.isolation.get(c.id))!.branch!;
    const base = w.store.read((tx) => tx.isolation.get(a.id))!.baseCommit!;

    const before = views();
    assert.deepEqual(
      [a, b, c].map((t) => before.get(t.id)?.canMerge),
      [false, false, true],
      'Merge is offered once, on the last step',
    );
    assert.deepEqual(
      [a, b, c].map((t) => before.get(t.id)?.canDiscard),
      [false, false, true],
    );
    await assert.rejects(handlers().mergeChanges({ taskId: a.id }), /Step C/, 'A alone cannot be merged while B and C sit on its branch');
    await assert.rejects(handlers().applyChanges({ taskId: b.id }), /Step C/);
    assert.equal(asked.length, 0, 'nothing was asked for a refused step');

    const result = await handlers().mergeChanges({ taskId: c.id });
    assert.equal(result.outcome, 'merged');
    const [dialog] = asked;
    const text = `${dialog.message}\n${dialog.detail}`;
    for (const name of ['Step A', 'Step B', 'Step C', 'a.txt', 'b.txt', 'c.txt'])
      assert.ok(text.includes(name), `the dialog names ${name}`);

    // One commit on the branch holds every step's work and names every step.
    assert.equal(git(repo, 'rev-list', '--count', `${base}..${branch}`), '1');
    const message = git(repo, 'log', '-1', '--format=%B', branch);
    for (const name of ['Step A', 'Step B', 'Step C', 'a.txt', 'b.txt', 'c.txt'])
      assert.ok(message.includes(name), `the commit names ${name}`);
    assert.deepEqual(git(repo, 'show', '--name-only', '--format=', branch).split('\n').sort(), ['a.txt', 'b.txt', 'c.txt']);
    assert.equal(git(repo, 'rev-parse', 'main^2'), git(repo, 'rev-parse', branch));
    for (const f of ['a.txt', 'b.txt', 'c.txt']) assert.ok(fs.existsSync(path.join(repo, f)), `${f} is in the folder`);

    const after = views();
    for (const t of [a, b, c]) {
      assert.ok(after.get(t.id)?.mergedAt != null, `${t.title}'s card says Merged`);
      assert.equal(after.get(t.id)?.canMerge, false, `${t.title} offers no second Merge`);
    }
    await assert.rejects(handlers().mergeChanges({ taskId: b.id }));
    await assert.rejects(handlers().mergeChanges({ taskId: c.id }));
    assert.equal(git(repo, 'rev-list', '--count', 'main'), '3', 'no second merge commit');
  });

  it('item 3: discard after merge says it removes the worktree and branch of merged work, and every card keeps Merged', async () => {
    const { a, b, c } = await chainOfThree();
    const { branch, worktreePath } = w.store.read((tx) => tx.isolation.get(c.id))!;
    await handlers().mergeChanges({ taskId: c.id });
    asked = [];
    const done = await handlers().discardChanges({ taskId: c.id });
    assert.equal(done.done, true);
    const [dialog] = asked;
    assert.match(dialog.message, /Remove worktree and branch/);
    assert.match(`${dialog.message} ${dialog.detail}`, /already merged/);
    assert.doesNotMatch(`${dialog.message} ${dialog.detail}`, /cannot be undone|discard the changes|with the \d+ changed file/i);
    assert.ok(!fs.existsSync(worktreePath!), 'the worktree is gone');
    assert.equal(git(repo, 'branch', '--list', branch!), '', 'the branch is gone');
    for (const f of ['a.txt', 'b.txt', 'c.txt']) assert.ok(fs.existsSync(path.join(repo, f)), `the merged ${f} stays`);
    const after = views();
    for (const t of [a, b, c]) {
      const v = after.get(t.id)!;
      assert.ok(v.mergedAt != null, `${t.title}'s card still says Merged`);
      assert.equal(v.discardedAt ?? null, null, `${t.title}'s card does not say discarded`);
      assert.equal(v.canDiscard, false);
      assert.equal(w.store.read((tx) => tx.isolation.get(t.id))?.broughtHome?.kind, 'merged', `${t.title}'s record stays merged`);
    }
  });

  it('item 3: discard after apply says the changes are already in the folder, and the card keeps Applied', async () => {
    const a = await w.service.create(taskInput({ title: 'Solo', workspacePath: repo, isolation: 'worktree' }));
    await runStep(a.id, 'solo.txt');
    await handlers().applyChanges({ taskId: a.id });
    asked = [];
    await handlers().discardChanges({ taskId: a.id });
    const [dialog] = asked;
    assert.match(dialog.message, /Remove worktree and branch/);
    assert.match(`${dialog.message} ${dialog.detail}`, /already applied/);
    assert.doesNotMatch(`${dialog.message} ${dialog.detail}`, /cannot be undone|with the \d+ changed file/i);
    const v = views().get(a.id)!;
    assert.ok(v.appliedAt != null);
    assert.equal(v.discardedAt ?? null, null);
    assert.ok(fs.existsSync(path.join(repo, 'solo.txt')));
  });
});
