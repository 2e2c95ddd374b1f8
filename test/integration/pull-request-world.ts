// A world for the pull request tests (docs/flows.md#pull-requests): a real repository whose
// origin is the forge fixture's real bare remote, the real store and reference gateway in
// simulated time, and a task on its own branch that changed README.md and completed.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveWorkplace } from '../../src/agent/workplace/task-workplace';
import { bringHomeHandlers } from '../../src/panel/bring-home-handlers';
import type { PanelHostBits } from '../../src/panel/host-bits';
import { workplaceViews } from '../../src/panel/workplace-panel';
import type { PullRequestSettings, TaskServiceOptions } from '../../src/service';
import { startForgeFixture, type ForgeFixture } from '../fixtures/forge-fixture';
import { World, taskInput, startRunning, type Window } from './service-harness';

export const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' }).trim();

export interface FinishedTask {
  id: string;
  branch: string;
  worktree: string;
}

export class PullRequestWorld {
  settings!: PullRequestSettings;
  token: string | undefined;
  root!: string;
  repo!: string;
  w!: Window;

  private constructor(
    readonly forge: ForgeFixture,
    readonly world: World,
  ) {}

  static async start(): Promise<PullRequestWorld> {
    const t = new PullRequestWorld(await startForgeFixture(), await World.start());
    t.root = fs.mkdtempSync(path.join(os.tmpdir(), 'pr-world-'));
    t.repo = path.join(t.root, 'repo');
    fs.mkdirSync(t.repo);
    fs.writeFileSync(path.join(t.repo, 'README.md'), 'helo\n');
    git(t.repo, 'init', '-q', '-b', 'main');
    git(t.repo, 'add', '.');
    git(t.repo, 'commit', '-q', '-m', 'init');
    git(t.repo, 'push', '-q', t.forge.bareRepo('team', 'app'), 'main');
    git(t.repo, 'remote', 'add', 'origin', t.forge.cloneUrl('team', 'app'));
    t.settings = { remote: 'origin', draft: true, githubEnterpriseHosts: [t.forge.origin] };
    t.token = t.forge.token;
    t.w = await t.openWindow('holder');
    return t;
  }

  /** A window with this world's pull request settings and token. */
  openWindow(name: string): Promise<Window> {
    const pullRequests: TaskServiceOptions['pullRequests'] = { settings: () => this.settings, token: async () => this.token };
    return this.world.openWindow(name, { pullRequests });
  }

  async close(): Promise<void> {
    await this.world.close();
    await this.forge.close();
    fs.rmSync(this.root, { recursive: true, force: true });
  }

  handlers() {
    return bringHomeHandlers(this.w.service, this.w.store, {} as PanelHostBits, undefined);
  }

  view(taskId: string) {
    return this.w.store.read((tx) => workplaceViews(tx, this.w.service.listTasks())).get(taskId)!;
  }

  /** The task's branch and worktree as they were: nothing lost, a retry possible. */
  assertUntouched(task: FinishedTask): void {
    assert.equal(fs.readFileSync(path.join(task.worktree, 'README.md'), 'utf8'), 'hello\n', 'the worktree keeps the work');
    assert.ok(git(this.repo, 'rev-parse', '--verify', task.branch), 'the branch is there');
    assert.equal(this.w.store.read((tx) => tx.isolation.get(task.id))!.broughtHome, null);
    assert.equal(this.view(task.id).canOpenPullRequest, true, 'the card still offers it: a retry is possible');
  }

  /** A task on its own branch that wrote README.md and completed, as the runtime runs it. */
  async finishedTask(): Promise<FinishedTask> {
    const { w, world } = this;
    const task = await w.service.create(
      taskInput({ title: 'Fix the README typo', prompt: 'Fix the typo in the README.', workspacePath: this.repo, isolation: 'worktree' }),
    );
    await world.promote();
    await world.advance(15_000);
    await startRunning(w, task.id);
    await w.store.mutate((tx) => tx.runtime.recordFirstStart({ taskId: task.id, agent: 'reference', baseCommit: null }));
    const place = await resolveWorkplace(w.store, w.service.getTask(task.id)!, path.join(this.root, 'worktrees'));
    assert.equal(place.kind, 'ready');
    if (place.kind !== 'ready') throw new Error('no worktree');
    fs.writeFileSync(path.join(place.place.folder, 'README.md'), 'hello\n');
    await w.store.mutate((tx) =>
      tx.isolation.recordChanges(task.id, [{ path: 'README.md', status: 'modified', added: 1, removed: 1, oldBlob: null }]),
    );
    assert.ok(await w.service.lifecycle.complete(task.id, {}));
    const isolation = w.store.read((tx) => tx.isolation.get(task.id))!;
    return { id: task.id, branch: isolation.branch!, worktree: isolation.worktreePath! };
  }
}
