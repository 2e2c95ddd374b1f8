// Where a task works when the open folder is not the top of a repository (docs/flows.md#isolation),
// end to end: the REAL reference gateway (loopback) in front of the scripted fake model upstream
// (a fixture standing in for the model API), the real store/service/scheduler/runtime, real
// agent processes and real git repositories in a temporary folder.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { AgentKind } from '../../src/agent/runtime/agent-adapter';
import type { HostEngine } from '../../src/engine/host-engine';
import { createServiceBackend } from '../../src/panel/service-backend';
import type { PanelHostBits } from '../../src/panel/host-bits';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { startTestEngine, waitFor } from './test-engine';

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
const commitAll = (cwd: string, message: string) =>
  git(cwd, '-c', 'user.email=e2e@example.invalid', '-c', 'user.name=e2e', 'commit', '-q', '-m', message);

/** The branches tasks made in the repository, and how many worktrees git knows of it (1: the user's own). */
function leftovers(repo: string): { branches: string; worktrees: number } {
  return {
    branches: git(repo, 'branch', '--list', 'offpeak/*'),
    worktrees: git(repo, 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((l) => l.startsWith('worktree ')).length,
  };
}

/** What the panel needs from VS Code, with these folders open and `offPeak.isolation` worktree. */
function hostBits(folders: string[]): PanelHostBits {
  return {
    hasApiKey: async () => true,
    setApiKey: async () => undefined,
    workspaces: () => folders.map((f) => ({ name: path.basename(f), path: f, identity: null })),
    models: () => [],
    configs: () => undefined,
    reloadConfigs: async () => undefined,
    openTerminal: async () => undefined,
    confirm: async () => true,
    isolation: () => 'worktree',
    notice: () => undefined,
  };
}

describe('tasks in a folder inside a repository (real git, real gateway, agent processes)', function () {
  let world: GatewayWorld;
  let host: HostEngine | undefined;

  afterEach(async () => {
    await host?.dispose();
    host = undefined;
    await world?.close();
  });

  async function boot(agent: AgentKind = 'reference', claudeCommand?: string): Promise<HostEngine> {
    world = await startWorld({});
    host = await startTestEngine({
      storageDir: path.join(world.root, 'globalStorage'),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent,
      claudeCommand,
    });
    await waitFor(() => host!.service.isLeader, 'the lease');
    return host;
  }

  /** A repository with a committed package folder and an ignored folder (as `.tools/start/workspace` in this project). */
  function monorepo(): { repo: string; tracked: string; ignored: string; untracked: string } {
    const repo = makeGitWorkspace(world.root, 'mono');
    const tracked = path.join(repo, 'packages', 'app');
    fs.mkdirSync(tracked, { recursive: true });
    fs.writeFileSync(path.join(tracked, 'index.js'), 'module.exports = 1;\n');
    fs.writeFileSync(path.join(repo, '.gitignore'), '.tools/\n');
    git(repo, 'add', '.');
    commitAll(repo, 'a package');
    const ignored = path.join(repo, '.tools', 'start', 'workspace');
    fs.mkdirSync(ignored, { recursive: true });
    const untracked = path.join(repo, 'scratch');
    fs.mkdirSync(untracked);
    fs.writeFileSync(path.join(untracked, 'notes.txt'), 'mine\n');
    return { repo, tracked, ignored, untracked };
  }

  it("a tracked subfolder runs in the same subfolder of the task's worktree", async () => {
    const h = await boot();
    const { repo, tracked } = monorepo();
    world.upstream.enqueue(
      { kind: 'tool_use', name: 'run_command', input: { command: 'pwd > where.txt' } },
      { kind: 'text', text: 'Done.' },
    );
    const task = await h.service.create({
      title: 'where',
      prompt: 'say where you are',
      permissionMode: 'bypassPermissions',
      workspacePath: tracked,
      isolation: 'worktree',
    });
    await waitFor(() => h.service.getTask(task.id)!.status === 'completed', 'completed', 90_000);
    const iso = h.store.read((tx) => tx.isolation.get(task.id))!;
    assert.equal(iso.mode, 'worktree');
    const counterpart = path.join(iso.worktreePath!, 'packages', 'app');
    assert.equal(fs.readFileSync(path.join(counterpart, 'where.txt'), 'utf8').trim(), fs.realpathSync(counterpart));
    assert.ok(!fs.existsSync(path.join(tracked, 'where.txt')), "the user's folder is not touched");
    assert.deepEqual(
      iso.changes!.map((c) => c.path),
      ['packages/app/where.txt'],
    );
    assert.equal(leftovers(repo).worktrees, 2);
  });

  it('an ignored subfolder queued for its own branch (palette, older setting) runs in place, its card says why, and no branch or worktree is left', async () => {
    const h = await boot();
    const { repo, ignored } = monorepo();
    world.upstream.enqueue(
      { kind: 'tool_use', name: 'write_file', input: { path: 'hello.txt', content: 'hello\n' } },
      { kind: 'text', text: 'Done.' },
    );
    const task = await h.service.create({
      title: 'hello',
      prompt: 'create hello.txt',
      permissionMode: 'bypassPermissions',
      workspacePath: ignored,
      isolation: 'worktree',
    });
    await waitFor(() => ['completed', 'failed'].includes(h.service.getTask(task.id)!.status), 'finished', 90_000);
    assert.equal(h.service.getTask(task.id)!.failureReason, null);
    assert.equal(h.service.getTask(task.id)!.status, 'completed');
    assert.equal(fs.readFileSync(path.join(ignored, 'hello.txt'), 'utf8'), 'hello\n', 'it ran in the folder itself');
    const card = createServiceBackend(h.service, h.store, hostBits([ignored]), h.questions).workplaces!().get(task.id)!;
    assert.equal(card.mode, 'inPlace');
    assert.match(card.note ?? '', /^Runs in place: the folder is ignored by its git repository .*mono/);
    assert.deepEqual(leftovers(repo), { branches: '', worktrees: 1 });
  });

  it('the form: an ignored or untracked folder (or none in git) cannot have its own branch, says why before queueing, and queues in place', async () => {
    const h = await boot();
    const { repo, tracked, ignored, untracked } = monorepo();
    const plain = path.join(world.root, 'plain');
    fs.mkdirSync(plain);
    const backend = createServiceBackend(h.service, h.store, hostBits([tracked, ignored, untracked, plain]), h.questions);
    const views = await backend.workspaces();
    const byPath = new Map(views.map((w) => [w.path, w]));
    assert.deepEqual([byPath.get(tracked)!.ownBranch, byPath.get(tracked)!.noOwnBranch], [true, undefined]);
    for (const folder of [ignored, untracked, plain]) assert.equal(byPath.get(folder)!.ownBranch, false, folder);
    assert.match(byPath.get(ignored)!.noOwnBranch ?? '', /ignored by its git repository/);
    assert.match(byPath.get(untracked)!.noOwnBranch ?? '', /not committed in its git repository/);
    assert.match(byPath.get(plain)!.noOwnBranch ?? '', /not in a git repository/);

    // A submit that asks for its own branch anyway (a stale form) is refused, naming the way out.
    await assert.rejects(
      backend.createTask({
        input: {
          title: 'x',
          prompt: 'create hello.txt',
          workspacePath: ignored,
          permissionMode: 'default',
          model: null,
          thoughtLevel: null,
          ownBranch: true,
        },
      }),
      /cannot run on its own branch: the folder is ignored .*Run on its own branch/,
    );
    assert.equal(h.service.listTasks().length, 0);
    const { taskId } = await backend.createTask({
      input: {
        title: 'x',
        prompt: 'create hello.txt',
        workspacePath: ignored,
        permissionMode: 'default',
        model: null,
        thoughtLevel: null,
        ownBranch: false,
      },
    });
    assert.equal(h.store.read((tx) => tx.isolation.get(taskId!))!.mode, 'inPlace');
    assert.deepEqual(leftovers(repo), { branches: '', worktrees: 1 });

    // Bypass asks first, and says where the agent works: a new worktree for a tracked folder, the folder itself in place.
    const asked: string[] = [];
    const asking = createServiceBackend(
      h.service,
      h.store,
      { ...hostBits([tracked, ignored]), confirm: async (q) => (asked.push(q.detail), false) },
      h.questions,
    );
    for (const workspacePath of [tracked, ignored]) {
      assert.deepEqual(
        await asking.createTask({
          input: {
            title: 'b',
            prompt: 'bypass',
            workspacePath,
            permissionMode: 'bypassPermissions',
            model: null,
            thoughtLevel: null,
            ownBranch: workspacePath === tracked,
          },
        }),
        { taskId: null },
      );
    }
    assert.match(
      asked[0],
      /It works in a new worktree on its own offpeak\/… branch \(a worktree of .*packages\/app\): your working copy is not edited/,
    );
    assert.match(asked[1], /It works in .*\.tools\/start\/workspace: only choose this for a workspace you can restore/);
  });

  it('a task whose agent could not start leaves no branch or worktree behind, and its error names the program', async () => {
    const missing = path.join(path.sep, 'nonexistent-offpeak', 'claude');
    const h = await boot('claude-code', missing);
    const { repo, tracked } = monorepo();
    const task = await h.service.create({
      title: 'never',
      prompt: 'never starts',
      permissionMode: 'bypassPermissions',
      workspacePath: tracked,
      isolation: 'worktree',
    });
    await waitFor(() => h.service.getTask(task.id)!.status === 'failed', 'failed', 60_000);
    assert.match(h.service.getTask(task.id)!.failureReason ?? '', /nonexistent-offpeak/);
    assert.deepEqual(leftovers(repo), { branches: '', worktrees: 1 });
    assert.equal(h.store.read((tx) => tx.isolation.get(task.id))!.worktreePath, null, 'a retry makes a new one');
  });
});
