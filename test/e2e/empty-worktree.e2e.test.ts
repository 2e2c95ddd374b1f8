// A task on its own branch that changed nothing leaves no offpeak/… branch and no worktree
// (docs/flows.md#isolation), and a follow-up of it still runs where its session ran. The REAL
// reference gateway (loopback) in front of the scripted fake model upstream (a fixture standing in
// for the model API), the real task store/service/scheduler/runtime, real reference-agent
// processes and real git in a temporary folder.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createServiceBackend } from '../../src/panel/service-backend';
import { BARE_HOST } from '../integration/panel-link';
import { makeGitWorkspace } from './gateway-fixture';
import { useReferenceWorld, waitFor } from './test-engine';

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
const offpeakBranches = (ws: string) => git(ws, 'branch', '--list', 'offpeak/*');

describe('a task that changed nothing leaves no branch (real git, real gateway, reference agent processes)', function () {
  const { boot, world: currentWorld } = useReferenceWorld();

  it('item 6: a task that changed nothing leaves no offpeak/… branch or worktree; its follow-up runs in a worktree at the same path', async () => {
    const h = await boot();
    const ws = makeGitWorkspace(currentWorld().root);
    currentWorld().upstream.enqueue({ kind: 'text', text: 'Nothing to change.' });
    const task = await h.service.create({
      title: 'Look around',
      prompt: 'look, change nothing',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      isolation: 'worktree',
    });
    await waitFor(() => h.service.getTask(task.id)!.status === 'completed', 'completed');
    await waitFor(() => offpeakBranches(ws) === '', 'no offpeak/… branch left');
    await waitFor(() => h.store.read((tx) => tx.isolation.get(task.id))!.branch === null, 'the row forgets the branch');
    const row = h.store.read((tx) => tx.isolation.get(task.id))!;
    assert.ok(row.worktreePath && !fs.existsSync(row.worktreePath), 'its worktree folder is gone');
    assert.equal(row.branch, null);
    assert.equal(git(ws, 'worktree', 'list', '--porcelain').split('\n\n').filter(Boolean).length, 1, "only the folder's own checkout");
    const card = createServiceBackend(h.service, h.store, BARE_HOST, h.questions).workplaces!().get(task.id)!;
    assert.equal(card.branch, null, 'the card names no branch');
    assert.deepEqual([card.canMerge, card.canDiscard, card.canOpen], [false, false, false]);

    currentWorld().upstream.enqueue(
      { kind: 'tool_use', name: 'write_file', input: { path: 'later.txt', content: 'later\n' } },
      { kind: 'text', text: 'done' },
    );
    const follow = await h.service.followUp(task.id, { prompt: 'write later.txt' });
    await waitFor(() => h.service.getTask(follow.id)!.status === 'completed', 'the follow-up completed');
    const again = h.store.read((tx) => tx.isolation.get(follow.id))!;
    assert.equal(again.worktreePath, row.worktreePath, 'the follow-up works at the path its session ran in');
    assert.ok(again.branch?.startsWith('offpeak/'));
    assert.equal(fs.readFileSync(path.join(again.worktreePath!, 'later.txt'), 'utf8'), 'later\n');
    assert.ok(!fs.existsSync(path.join(ws, 'later.txt')), "the user's folder is not touched");
  });
});
