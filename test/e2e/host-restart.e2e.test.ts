// The host process (a window) is killed with SIGKILL while its agent runs; a new host starts on
// the same DB: start-up recovery requeues the task, the scheduler dispatches it again at once on
// its still-active ticket, and the SAME session resumes to completion.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { TaskStore } from '../../src/store';
import { deriveHistoryRow } from '../../src/core/history';
import { makeGitWorkspace, processAlive, shape, startWorld, toolUseIds, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { waitFor } from './test-engine';
import { spawnHost } from './spawn-host';

describe('host process killed mid-run (real processes end to end)', function () {
  let world: GatewayWorld;
  let store: TaskStore | undefined;
  const hosts: ChildProcess[] = [];

  afterEach(async () => {
    for (const h of hosts) if (h.exitCode === null && h.signalCode === null) h.kill('SIGKILL');
    await store?.close();
    await world.close();
  });

  it('restart -> recovery requeues -> the same session resumes on the same ticket -> completed', async () => {
    world = await startWorld();
    const ws = makeGitWorkspace(world.root);
    world.upstream.enqueue(
      { kind: 'tool_use', name: 'run_command', input: { command: 'echo started > started.txt; sleep 60' } },
      { kind: 'text', text: 'Resumed after the restart and finished.' },
    );
    const common = {
      storageDir: path.join(world.root, 'globalStorage'),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
    };
    const first = spawnHost({
      ...common,
      windowId: 'window-A',
      create: { title: 'survive', prompt: 'long work', permissionMode: 'bypassPermissions', workspacePath: ws },
    });
    hosts.push(first.child);
    const started = await waitFor(() => first.lines.find((l) => l.event?.type === 'segment-started')?.event, 'the first segment', 60_000);
    await waitFor(() => fs.existsSync(path.join(ws, 'started.txt')), 'the command to run', 30_000);
    const taskId = started.taskId;

    first.child.kill('SIGKILL');
    await first.exited;
    // The orphaned agent notices its host is gone and ends resumably (or recovery stops it).
    await waitFor(() => !processAlive(started.pid), 'the orphaned agent to end', 20_000).catch(() => undefined);

    store = await TaskStore.open({ directory: common.storageDir, watch: false });
    assert.equal(store.read((tx) => tx.tasks.get(taskId))!.status, 'running', 'the dead host left the task running');

    const second = spawnHost({ ...common, windowId: 'window-B' });
    hosts.push(second.child);
    const ready = await waitFor(() => second.lines.find((l) => l.ready), 'the second host', 60_000);
    assert.deepEqual(ready.recovery!.requeued, [taskId]);
    const resumedSegment = await waitFor(
      () => second.lines.find((l) => l.event?.type === 'segment-started')?.event,
      'the resumed segment',
      60_000,
    );
    assert.equal(resumedSegment.resume, true);
    assert.equal(resumedSegment.sessionId, started.sessionId);
    await waitFor(() => store!.read((tx) => tx.tasks.get(taskId))!.status === 'completed', 'completed', 60_000);
    assert.equal(processAlive(started.pid), false, 'nothing of the first segment is left running');

    const task = store.read((tx) => tx.tasks.get(taskId))!;
    assert.equal(task.sessionId, started.sessionId);
    const history = deriveHistoryRow(task, Date.now());
    assert.equal(history?.status, 'succeeded');
    await waitFor(
      () => store!.read((tx) => tx.tickets.forTask(taskId)).every((t) => t.settleState === 'settled'),
      'the ticket settled',
      30_000,
    );
    const tickets = store.read((tx) => tx.tickets.forTask(taskId));
    assert.equal(tickets.length, 1, 'the still-active ticket was reused: no new take');
    assert.equal(tickets[0].settleReason, 'completed');
    const requests = world.upstream.messageRequests();
    assert.equal(requests.length, 2);
    assert.equal(
      tickets[0].endReason,
      'completed',
      'the segment resumed on the same ticket records its real end, not the crash in between',
    );
    assert.deepEqual(shape(requests[1].body), ['user:text', 'assistant:tool_use', 'user:tool_result+text']);
    const firstToolUseId = /"type":"tool_use","id":"(toolu_[^"]+)"/.exec(requests[0].sentBody.toString('utf8'))?.[1];
    assert.deepEqual(toolUseIds(requests[1].body), [firstToolUseId]);

    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0);
  });
});
