// Isolation end to end on real git (docs/flows.md#isolation): the REAL reference gateway
// (loopback) in front of the scripted fake model upstream (a fixture standing in for the model
// API), the real task store/service/scheduler/runtime, real reference-agent processes and real
// git repositories in a temporary folder.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { RuntimeEvent } from '../../src/agent/runtime/task-runtime';
import { systemClock } from '../../src/core/clock';
import { engineDirs, type HostEngine } from '../../src/engine/host-engine';
import { PanelController } from '../../src/panel/panel-controller';
import { createServiceBackend } from '../../src/panel/service-backend';
import type { RecordedRequest, ScriptedReply } from '../fixtures/fake-anthropic-upstream';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { BARE_HOST } from '../integration/panel-link';
import { startTestEngine, waitFor } from './test-engine';

interface Body {
  messages: { role: string; content: string | { type: string; text?: string }[] }[];
}

/** The task's prompt (the first user text) and how many tool calls the agent made so far. */
function conversation(request: RecordedRequest): { prompt: string; toolCalls: number } {
  const messages = (request.body as Body).messages;
  const first = messages[0].content;
  const prompt = typeof first === 'string' ? first : (first.find((c) => c.type === 'text')?.text ?? '');
  const toolCalls = messages.filter(
    (m) => m.role === 'assistant' && Array.isArray(m.content) && m.content.some((c) => c.type === 'tool_use'),
  ).length;
  return { prompt, toolCalls };
}

/** Replies chosen per request by the task's prompt: `steps[prompt][n]` answers its n-th request. */
function scripted(steps: Record<string, ScriptedReply[]>): ScriptedReply {
  return {
    kind: 'handler',
    handle: (request) => {
      const { prompt, toolCalls } = conversation(request);
      return steps[prompt]?.[toolCalls] ?? { kind: 'text', text: 'Done.' };
    },
  };
}

const hostBits = BARE_HOST;

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

describe('tasks on their own branches (real git, real gateway, reference agent processes)', function () {
  let world: GatewayWorld;
  let host: HostEngine | undefined;

  afterEach(async () => {
    await host?.dispose();
    host = undefined;
    await world?.close();
  });

  const storageDir = () => path.join(world.root, 'globalStorage');

  async function boot(config: Parameters<typeof startWorld>[0] = {}, events: RuntimeEvent[] = []): Promise<HostEngine> {
    world = await startWorld(config);
    host = await startTestEngine({
      storageDir: storageDir(),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
      onEvent: (e) => events.push(e),
    });
    await waitFor(() => host!.service.isLeader, 'the lease');
    return host;
  }

  it("two tasks on one repository at the same time, with the user's uncommitted edit: each branch holds only its own task's changes; the working copy is untouched, also by Discard and Delete, which remove the branch", async () => {
    const h = await boot();
    const ws = makeGitWorkspace(world.root, 'repo');
    // The user's own work in progress: an edited tracked file and a new untracked one.
    fs.writeFileSync(path.join(ws, 'README.md'), '# workspace\nthe user is editing this line\n');
    fs.writeFileSync(path.join(ws, 'notes.txt'), 'my notes\n');
    const head = git(ws, 'rev-parse', 'HEAD');
    const statusBefore = git(ws, 'status', '--porcelain');
    const rendezvous = path.join(world.root, 'rendezvous');
    fs.mkdirSync(rendezvous);
    // Each agent waits, inside its first command, until the other one runs too: both run at once.
    const meet = (me: string, other: string) =>
      `touch ${rendezvous}/${me}; while [ ! -f ${rendezvous}/${other} ]; do sleep 0.05; done; pwd > where-${me}.txt`;
    const steps: Record<string, ScriptedReply[]> = {
      'task A: add a.txt': [
        { kind: 'tool_use', name: 'run_command', input: { command: meet('a', 'b') } },
        { kind: 'tool_use', name: 'write_file', input: { path: 'a.txt', content: 'from A\n' } },
        { kind: 'text', text: 'A done.' },
      ],
      'task B: rewrite README.md and add b.txt': [
        { kind: 'tool_use', name: 'run_command', input: { command: meet('b', 'a') } },
        { kind: 'tool_use', name: 'write_file', input: { path: 'README.md', content: '# B was here\n' } },
        { kind: 'tool_use', name: 'write_file', input: { path: 'b.txt', content: 'from B\nline 2\n' } },
        { kind: 'text', text: 'B done.' },
      ],
    };
    for (let i = 0; i < 12; i++) world.upstream.enqueue(scripted(steps));
    const a = await h.service.create({
      title: 'Task A',
      prompt: 'task A: add a.txt',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      isolation: 'worktree',
    });
    const b = await h.service.create({
      title: 'Task B',
      prompt: 'task B: rewrite README.md and add b.txt',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      isolation: 'worktree',
    });
    await waitFor(() => [a, b].every((t) => h.service.getTask(t.id)!.status === 'completed'), 'both tasks completed', 120_000);

    // The user's working copy: same HEAD, same branch, same edits, none of the tasks' files.
    assert.equal(git(ws, 'rev-parse', 'HEAD'), head);
    assert.equal(git(ws, 'status', '--porcelain'), statusBefore);
    assert.equal(fs.readFileSync(path.join(ws, 'README.md'), 'utf8'), '# workspace\nthe user is editing this line\n');
    for (const f of ['a.txt', 'b.txt', 'where-a.txt', 'where-b.txt'])
      assert.ok(!fs.existsSync(path.join(ws, f)), `${f} is not in the user's folder`);

    const isoA = h.store.read((tx) => tx.isolation.get(a.id))!;
    const isoB = h.store.read((tx) => tx.isolation.get(b.id))!;
    for (const [iso, me] of [
      [isoA, 'a'],
      [isoB, 'b'],
    ] as const) {
      assert.equal(iso.mode, 'worktree');
      assert.equal(iso.baseCommit, head, "the branch starts at the folder's HEAD");
      assert.match(iso.branch!, /^offpeak\/task-[ab]-[a-z0-9]+$/);
      assert.ok(iso.worktreePath!.startsWith(path.join(storageDir(), 'worktrees')), 'the worktree lives in globalStorage');
      assert.equal(git(ws, 'rev-parse', `refs/heads/${iso.branch}`), head, 'the branch exists in the repository');
      assert.equal(
        fs.readFileSync(path.join(iso.worktreePath!, `where-${me}.txt`), 'utf8').trim(),
        fs.realpathSync(iso.worktreePath!),
        'the agent ran in its worktree',
      );
    }
    assert.notEqual(isoA.worktreePath, isoB.worktreePath);
    // Each worktree holds only its own task's changes (and never the user's uncommitted edit).
    assert.deepEqual(
      isoA.changes!.map((c) => [c.path, c.status, c.added, c.removed]),
      [
        ['a.txt', 'added', 1, 0],
        ['where-a.txt', 'added', 1, 0],
      ],
    );
    assert.deepEqual(
      isoB.changes!.map((c) => [c.path, c.status, c.added, c.removed]),
      [
        ['README.md', 'modified', 1, 1],
        ['b.txt', 'added', 2, 0],
        ['where-b.txt', 'added', 1, 0],
      ],
    );
    assert.equal(fs.readFileSync(path.join(isoA.worktreePath!, 'README.md'), 'utf8'), '# workspace\n');
    assert.ok(!fs.existsSync(path.join(isoA.worktreePath!, 'b.txt')) && !fs.existsSync(path.join(isoB.worktreePath!, 'a.txt')));
    assert.ok(!fs.existsSync(path.join(isoA.worktreePath!, 'notes.txt')), "the user's untracked file stays in the user's folder");
    assert.deepEqual([h.service.getTask(a.id)!.filesChanged, h.service.getTask(b.id)!.filesChanged], [2, 3]);

    // Discard on B's card: declined, nothing changes; confirmed, its worktree and branch go, the task and its list stay.
    let answer = false;
    const backend = createServiceBackend(h.service, h.store, { ...hostBits, confirm: async () => answer }, h.questions);
    assert.deepEqual(await backend.discardChanges({ taskId: b.id }), { done: false });
    assert.ok(fs.existsSync(isoB.worktreePath!));
    answer = true;
    assert.deepEqual(await backend.discardChanges({ taskId: b.id }), {
      done: true,
      report: `Removed the worktree ${isoB.worktreePath} and the branch ${isoB.branch}.`,
    });
    assert.ok(!fs.existsSync(isoB.worktreePath!));
    assert.equal(git(ws, 'branch', '--list', isoB.branch!), '');
    const cardB = backend.workplaces!().get(b.id)!;
    assert.ok(cardB.discardedAt !== null && cardB.discardedAt !== undefined);
    assert.deepEqual([cardB.reviewable, cardB.canDiscard, cardB.changes?.length], [false, false, 3]);
    assert.equal(git(ws, 'status', '--porcelain'), statusBefore, "discarding leaves the user's working copy as it was");

    // Deleting a task takes its worktree and branch along (asked first: A's changes are committed nowhere).
    const asked: string[] = [];
    const asking = createServiceBackend(
      h.service,
      h.store,
      { ...hostBits, confirm: async (q) => (asked.push(q.message), true) },
      h.questions,
    );
    assert.deepEqual(await asking.delete({ taskId: a.id }), { done: true });
    assert.deepEqual(asked, ['Delete "Task A" and its branch?']);
    await waitFor(
      () => !fs.existsSync(isoA.worktreePath!) && git(ws, 'branch', '--list', isoA.branch!) === '',
      'the worktree and branch of A are gone',
    );
    assert.equal(
      git(ws, 'worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')).length,
      1,
      "only the user's folder is left",
    );
    assert.equal(git(ws, 'status', '--porcelain'), statusBefore);
  });

  it('a task resumed after 3102 stays in its worktree with one session', async () => {
    const events: RuntimeEvent[] = [];
    // Active window 2 s; the command runs 3 s, so the next model request meets an expired ticket (a real 3102).
    const h = await boot({ activeWindowMs: 2_000 }, events);
    world.upstream.enqueue(
      { kind: 'tool_use', name: 'run_command', input: { command: 'sleep 3; pwd > segment1.txt' } },
      { kind: 'tool_use', name: 'run_command', input: { command: 'pwd > segment2.txt' } },
      { kind: 'text', text: 'Both steps done.' },
    );
    const ws = makeGitWorkspace(world.root);
    const created = await h.service.create({
      title: 'long',
      prompt: 'do the long task',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      isolation: 'worktree',
    });
    await waitFor(() => h.service.getTask(created.id)!.status === 'completed', 'completed', 90_000);
    assert.deepEqual(
      h.service.ticketsOf(created.id).map((t) => t.endReason),
      ['expired', 'completed'],
    );
    const iso = h.store.read((tx) => tx.isolation.get(created.id))!;
    const where = fs.realpathSync(iso.worktreePath!);
    assert.equal(fs.readFileSync(path.join(iso.worktreePath!, 'segment1.txt'), 'utf8').trim(), where);
    assert.equal(
      fs.readFileSync(path.join(iso.worktreePath!, 'segment2.txt'), 'utf8').trim(),
      where,
      'the resumed segment ran in the same worktree',
    );
    assert.ok(!fs.existsSync(path.join(ws, 'segment1.txt')) && !fs.existsSync(path.join(ws, 'segment2.txt')));
    const started = events.filter((e) => e.type === 'segment-started');
    assert.deepEqual(
      started.map((e) => e.resume),
      [false, true],
    );
    assert.equal(new Set(started.map((e) => e.sessionId)).size, 1, 'one session');
    assert.deepEqual(fs.readdirSync(engineDirs(storageDir()).referenceSessionsDir), [`${h.service.getTask(created.id)!.sessionId}.jsonl`]);
    // One worktree for the task: git lists the user's folder and this one only.
    assert.equal(
      git(ws, 'worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')).length,
      2,
    );
  });

  it('in-place tasks in one folder never overlap: the second waits until the first has finished', async () => {
    const events: RuntimeEvent[] = [];
    const h = await boot({}, events);
    const ws = makeGitWorkspace(world.root);
    const steps: Record<string, ScriptedReply[]> = {
      'first in place': [
        { kind: 'tool_use', name: 'run_command', input: { command: 'sleep 1; echo one > one.txt' } },
        { kind: 'text', text: 'one done' },
      ],
      'second in place': [
        { kind: 'tool_use', name: 'run_command', input: { command: 'sleep 1; echo two > two.txt' } },
        { kind: 'text', text: 'two done' },
      ],
    };
    for (let i = 0; i < 8; i++) world.upstream.enqueue(scripted(steps));
    const one = await h.service.create({
      title: 'one',
      prompt: 'first in place',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      isolation: 'inPlace',
    });
    const two = await h.service.create({
      title: 'two',
      prompt: 'second in place',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      isolation: 'inPlace',
    });
    // While one runs, the other's card says what it waits for.
    const panel = new PanelController(
      { postMessage: () => undefined, onDidReceiveMessage: () => ({ dispose() {} }) },
      createServiceBackend(h.service, h.store, hostBits, h.questions),
      systemClock,
    );
    let waiting: { running: string; waiting: string } | undefined;
    for (const start = Date.now(); !waiting; await new Promise((r) => setTimeout(r, 25))) {
      if (Date.now() - start > 60_000) throw new Error('timed out waiting for a card waiting for the folder');
      const cards = (await panel.snapshot()).tasks;
      const running = cards.find((c) => c.status === 'running');
      const other = cards.find((c) => c.status === 'queued');
      if (running && other?.workplace?.waitingFor === running.title) waiting = { running: running.title, waiting: other.title };
    }
    panel.dispose();
    assert.deepEqual([waiting.running, waiting.waiting].sort(), ['one', 'two']);
    await waitFor(() => [one, two].every((t) => h.service.getTask(t.id)!.status === 'completed'), 'both completed', 120_000);
    // The segments, in the order they started and ended: never two at once in the folder.
    const timeline = events.flatMap((e) =>
      e.type === 'segment-started' ? [`start ${e.taskId}`] : e.type === 'segment-ended' ? [`end ${e.taskId}`] : [],
    );
    const firstId = timeline[0].slice('start '.length);
    const secondId = firstId === one.id ? two.id : one.id;
    assert.deepEqual(timeline, [`start ${firstId}`, `end ${firstId}`, `start ${secondId}`, `end ${secondId}`]);
    assert.ok(fs.existsSync(path.join(ws, 'one.txt')) && fs.existsSync(path.join(ws, 'two.txt')), 'both ran in the folder itself');
    assert.equal(h.store.read((tx) => tx.isolation.get(one.id))!.worktreePath, null);
  });

  it("Merge on the card: the task's work is committed on its branch and merged into the folder's checked-out branch; the card says so", async () => {
    const h = await boot();
    world.upstream.enqueue(
      { kind: 'tool_use', name: 'write_file', input: { path: 'feature.txt', content: 'feature\n' } },
      { kind: 'text', text: 'done' },
    );
    const ws = makeGitWorkspace(world.root);
    const branchOfFolder = git(ws, 'symbolic-ref', '--short', 'HEAD');
    fs.writeFileSync(path.join(ws, 'README.md'), '# workspace\nuser edit\n');
    const task = await h.service.create({
      title: 'Add feature',
      prompt: 'add feature.txt',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      isolation: 'worktree',
    });
    await waitFor(() => h.service.getTask(task.id)!.status === 'completed', 'completed');
    const iso = h.store.read((tx) => tx.isolation.get(task.id))!;
    const backend = createServiceBackend(h.service, h.store, hostBits, h.questions);
    assert.equal(backend.workplaces!().get(task.id)!.canMerge, true);
    assert.deepEqual(await backend.mergeChanges({ taskId: task.id }), { outcome: 'merged', into: branchOfFolder });
    assert.equal(fs.readFileSync(path.join(ws, 'feature.txt'), 'utf8'), 'feature\n');
    assert.equal(git(ws, 'rev-parse', 'HEAD^2'), git(ws, 'rev-parse', iso.branch!), "the folder's branch has the task's commit");
    assert.equal(fs.readFileSync(path.join(ws, 'README.md'), 'utf8'), '# workspace\nuser edit\n', "the user's uncommitted edit is kept");
    const card = backend.workplaces!().get(task.id)!;
    assert.ok(card.mergedAt !== null && card.mergedAt !== undefined);
    assert.equal(card.canMerge, false);
    await assert.rejects(backend.applyChanges({ taskId: task.id }), /no branch of its own to apply/);
  });

  it('a worktree removed by hand is reported on the task, not a crash; a follow-up of a worktree task runs in the same worktree', async () => {
    const h = await boot();
    world.upstream.enqueue(
      { kind: 'tool_use', name: 'write_file', input: { path: 'first.txt', content: '1\n' } },
      { kind: 'text', text: 'first done' },
    );
    const ws = makeGitWorkspace(world.root);
    const first = await h.service.create({
      title: 'first',
      prompt: 'write first.txt',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      isolation: 'worktree',
    });
    await waitFor(() => h.service.getTask(first.id)!.status === 'completed', 'first completed');
    const iso = h.store.read((tx) => tx.isolation.get(first.id))!;

    world.upstream.enqueue(
      { kind: 'tool_use', name: 'write_file', input: { path: 'second.txt', content: '2\n' } },
      { kind: 'text', text: 'second done' },
    );
    const follow = await h.service.followUp(first.id, { prompt: 'write second.txt' });
    await waitFor(() => h.service.getTask(follow.id)!.status === 'completed', 'the follow-up completed');
    assert.equal(h.store.read((tx) => tx.isolation.get(follow.id))!.worktreePath, iso.worktreePath, 'the same worktree');
    assert.ok(fs.existsSync(path.join(iso.worktreePath!, 'first.txt')) && fs.existsSync(path.join(iso.worktreePath!, 'second.txt')));
    assert.ok(!fs.existsSync(path.join(ws, 'second.txt')));

    // The user removes the worktree folder by hand; the next follow-up fails saying so.
    fs.rmSync(iso.worktreePath!, { recursive: true, force: true });
    const again = await h.service.followUp(follow.id, { prompt: 'write third.txt' });
    await waitFor(() => h.service.getTask(again.id)!.status === 'failed', 'the follow-up failed');
    assert.match(h.service.getTask(again.id)!.failureReason ?? '', /worktree .* is gone \(removed by hand\?\)/);
    assert.notEqual(h.store.read((tx) => tx.isolation.get(again.id))!.missingAt, null);
    assert.ok(h.service.isLeader, 'the window goes on');
  });
});
