// "After <task>" with "continue in its branch", end to end on real git (docs/flows.md#schedules-and-chains),
// three windows on one task DB (three HostEngines with their own store instances, as VS Code windows):
// the REAL reference gateway (loopback) in front of the scripted fake model upstream (a fixture
// standing in for the model API), the real task store/service/scheduler/runtime, real
// reference-agent processes and a real git repository in a temporary folder.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { HostEngine } from '../../src/engine/host-engine';
import type { RecordedRequest, ScriptedReply } from '../fixtures/fake-anthropic-upstream';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { waitFor } from './test-engine';
import { startWindow, type SharedStorage } from './two-windows';

/** The task's prompt (the first user text) and how many tool calls the agent made so far. */
function conversation(request: RecordedRequest): { prompt: string; toolCalls: number } {
  const messages = (request.body as { messages: { role: string; content: string | { type: string; text?: string }[] }[] }).messages;
  const first = messages[0]!.content;
  const prompt = typeof first === 'string' ? first : (first.find((c) => c.type === 'text')?.text ?? '');
  const toolCalls = messages.filter(
    (m) => m.role === 'assistant' && Array.isArray(m.content) && m.content.some((c) => c.type === 'tool_use'),
  ).length;
  return { prompt, toolCalls };
}

describe('a chain of steps in one branch, three windows (real git, real gateway, reference agent processes)', function () {
  this.timeout(240_000);
  let world: GatewayWorld;
  let place: SharedStorage | undefined;

  afterEach(async () => {
    for (const e of place?.engines.splice(0) ?? []) await e.dispose();
    await world?.close();
  });

  it("A → B → C, each after the one before, continuing in its branch: they run in order in one worktree, which holds every step's changes", async () => {
    world = await startWorld();
    const shared: SharedStorage = (place = {
      storageDir: path.join(world.root, 'globalStorage'),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      engines: [] as HostEngine[],
    });
    const [h, second, third] = [
      (await startWindow(shared, 'window-1', [])).engine,
      (await startWindow(shared, 'window-2', [])).engine,
      (await startWindow(shared, 'window-3', [])).engine,
    ];
    assert.deepEqual(
      [h, second, third].map((w) => w.service.isLeader),
      [true, false, false],
      'one lease holder',
    );
    const ws = makeGitWorkspace(world.root, 'repo');
    // Each step writes its file and says which files it found from the steps before.
    const step = (name: string): ScriptedReply[] => [
      { kind: 'tool_use', name: 'run_command', input: { command: `ls > seen-by-${name}.txt` } },
      { kind: 'tool_use', name: 'write_file', input: { path: `${name}.txt`, content: `from ${name}\n` } },
      { kind: 'text', text: `${name} done.` },
    ];
    const steps: Record<string, ScriptedReply[]> = { 'step a': step('a'), 'step b': step('b'), 'step c': step('c') };
    for (let i = 0; i < 12; i++) {
      world.upstream.enqueue({
        kind: 'handler',
        handle: (request) => {
          const { prompt, toolCalls } = conversation(request);
          return steps[prompt]?.[toolCalls] ?? { kind: 'text', text: 'Done.' };
        },
      });
    }

    const a = await h.service.create({
      title: 'A',
      prompt: 'step a',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      isolation: 'worktree',
    });
    const b = await second.service.create({
      title: 'B',
      prompt: 'step b',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      afterTaskId: a.id,
      continueInBranch: true,
    });
    const c = await third.service.create({
      title: 'C',
      prompt: 'step c',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      afterTaskId: b.id,
      continueInBranch: true,
    });
    await waitFor(
      () => [a, b, c].every((t) => ['completed', 'failed', 'cancelled'].includes(h.service.getTask(t.id)!.status)),
      'the chain to end',
      200_000,
    );

    const [ta, tb, tc] = [a, b, c].map((t) => h.service.getTask(t.id)!);
    for (const t of [ta, tb, tc]) assert.equal(t!.status, 'completed', `${t!.title}: ${t!.failureReason ?? ''}`);
    assert.ok(tb!.startedAt! >= ta!.endedAt! && tc!.startedAt! >= tb!.endedAt!, 'each step started after the one before ended');

    const [ia, ib, ic] = [a, b, c].map((t) => h.store.read((tx) => tx.isolation.get(t.id))!);
    assert.equal(ia!.mode, 'worktree');
    assert.deepEqual([ib!.worktreePath, ib!.branch], [ia!.worktreePath, ia!.branch], "B ran in A's worktree and branch");
    assert.deepEqual([ic!.worktreePath, ic!.branch], [ia!.worktreePath, ia!.branch], 'C too');
    const tree = ia!.worktreePath!;
    for (const name of ['a', 'b', 'c'])
      assert.equal(
        fs.readFileSync(path.join(tree, `${name}.txt`), 'utf8'),
        `from ${name}\n`,
        `${name}'s change is in the branch's worktree`,
      );
    assert.match(
      fs.readFileSync(path.join(tree, 'seen-by-c.txt'), 'utf8'),
      /a\.txt[\s\S]*b\.txt/,
      "C found A's and B's changes when it ran",
    );
    assert.doesNotMatch(fs.readFileSync(path.join(tree, 'seen-by-b.txt'), 'utf8'), /c\.txt/, 'B ran before C');
    for (const name of ['a.txt', 'b.txt', 'c.txt']) assert.ok(!fs.existsSync(path.join(ws, name)), `${name} is not in the user's folder`);
  });
});
