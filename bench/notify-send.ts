/**
 * notify_event_to_send_ms (issue 32): from a task's notice in the window that ran it (its result
 * decided once across windows, docs/flows.md#notifications-and-unseen-marks) to the moment the
 * away notification's receiver has the post, sent by the lease holder, another window
 * (docs/flows.md#away-notifications): the outbox write in window B -> window A sees the DB change
 * -> its send -> the receiver. Two REAL engines on one globalStorage, the REAL gateway in demo
 * mode and the reference agent; the receiver is a local HTTP server (a fixture standing in for a
 * JSON webhook). Goal: at most 1,000 ms.
 */
import { startNotifyReceiver } from '../test/fixtures/notify-receiver';
import { makeGitWorkspace } from '../test/e2e/gateway-fixture';
import { waitFor } from '../test/e2e/test-engine';
import { startDemoWorld, startWindow } from '../test/e2e/two-windows';

export async function notifyEventToSend(iterations: number): Promise<number[]> {
  const world = await startDemoWorld({ activeWindowMs: 600_000, demoStepMs: 50 });
  const receiver = await startNotifyReceiver();
  const samples: number[] = [];
  try {
    const notify = { target: async () => ({ kind: 'webhook' as const, url: `${receiver.origin}/hook` }), enabled: () => true };
    const noticedAt = new Map<string, number>();
    const holder = await startWindow(world, 'window-a', [], { notify });
    const ws = makeGitWorkspace(world.root, 'ws-bench');
    await startWindow(world, 'window-b', [ws], { notify, onNotice: (n) => noticedAt.set(n.taskId, Date.now()) });
    await holder.engine.service.availability.refresh();
    for (let i = 0; i < iterations; i++) {
      const task = await holder.engine.service.create({
        title: `n${i}`,
        prompt: 'Create hello.txt.',
        permissionMode: 'bypassPermissions',
        workspacePath: ws,
      });
      const post = await receiver.next((p) => (p.json as { task?: { id?: string } } | undefined)?.task?.id === task.id, 120_000);
      const at = await waitFor(() => noticedAt.get(task.id), 'the notice in window B', 10_000);
      samples.push(post.at - at);
    }
  } finally {
    await world.close();
    await receiver.close();
  }
  return samples;
}
