/**
 * park_answer_to_admitted (issue 19): from Allow on a task parked on its unanswered question
 * (docs/flows.md#questions-park-the-task) to the resumed segment's first model request admitted
 * by the gateway: the answer's transaction -> retake (a new ticket) -> status sync -> schedulable
 * -> scheduler claim -> spawn of the resumed session -> its first model request admitted. The
 * REAL engine (test timings), the REAL reference gateway and the reference agent; the model is
 * the scripted fake upstream (a fixture standing in for the model API). Goal: at most 2,000 ms.
 */
import path from 'node:path';
import type { RuntimeEvent } from '../src/agent/runtime/task-runtime';
import { makeGitWorkspace, startWorld, USER_KEY } from '../test/e2e/gateway-fixture';
import { startTestEngine, waitFor } from '../test/e2e/test-engine';

export async function parkAnswerToAdmitted(iterations: number): Promise<number[]> {
  const world = await startWorld({ segmentCapacity: 1 });
  const events: RuntimeEvent[] = [];
  const host = await startTestEngine({
    storageDir: path.join(world.root, 'globalStorage'),
    gatewayUrl: world.gateway.url,
    apiKey: USER_KEY,
    agent: 'reference',
    unansweredQuestion: 'park',
    askParkMs: 300,
    onEvent: (e) => events.push(e),
  });
  const samples: number[] = [];
  try {
    await waitFor(() => host.service.isLeader, 'the lease');
    const ws = makeGitWorkspace(world.root);
    const command = { command: 'echo parked >> parked.txt' };
    for (let i = 0; i < iterations; i++) {
      world.upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: command });
      const task = await host.service.create({
        title: `park ${i}`,
        prompt: 'append to parked.txt',
        permissionMode: 'default',
        workspacePath: ws,
      });
      await waitFor(() => host.service.getTask(task.id)?.status === 'needs_input', 'the park', 60_000);
      // The parked ticket is settled at the gateway before the user answers (minutes later in real life).
      await waitFor(() => host.service.ticketsOf(task.id).every((t) => t.settleState === 'settled'), 'the parked ticket settled', 30_000);
      const ask = host.questions.pendingAsks(task.id)[0];
      world.upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: command }, { kind: 'text', text: 'done' });
      const answeredAt = Date.now();
      const outcome = await host.questions.answerAsk(task.id, ask.id, 'allow', ask.inputDigest);
      if (outcome !== 'accepted') throw new Error(`the answer was ${outcome}`);
      const admitted = await waitFor(
        () => events.find((e) => e.type === 'admitted' && e.taskId === task.id && e.at >= answeredAt),
        'the resumed admission',
        60_000,
      );
      samples.push(admitted.type === 'admitted' ? admitted.at - answeredAt : NaN);
      await waitFor(() => host.service.getTask(task.id)?.status === 'completed', 'completed', 60_000);
    }
  } finally {
    await host.dispose();
    await world.close();
  }
  return samples;
}
