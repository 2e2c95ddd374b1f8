// Follow up… end to end in Node (docs/flows.md#follow-up): the REAL reference gateway (loopback)
// in front of the scripted fake model upstream (a fixture standing in for the model API), the
// real task store/service/scheduler/runtime, and real reference-agent processes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { engineDirs } from '../../src/engine/host-engine';
import { createServiceBackend } from '../../src/panel/service-backend';
import { PanelController } from '../../src/panel/panel-controller';
import { systemClock } from '../../src/core/clock';
import { makeGitWorkspace } from './gateway-fixture';
import { BARE_HOST } from '../integration/panel-link';
import { useReferenceWorld, waitFor } from './test-engine';

interface Body {
  messages: { role: string; content: string | { type: string; text?: string }[] }[];
}

/** Every text of a request's conversation, in order ("role: text"). */
function texts(body: unknown): string[] {
  return (body as Body).messages.flatMap((m) =>
    typeof m.content === 'string'
      ? [`${m.role}: ${m.content}`]
      : m.content.filter((c) => c.type === 'text').map((c) => `${m.role}: ${c.text}`),
  );
}

describe('follow-up end to end (real gateway, fake upstream, reference agent processes)', function () {
  const { boot, world: currentWorld } = useReferenceWorld();

  it('a follow-up resumes the finished task session: the agent sees the first task turns; own ticket, card and History row, linked', async () => {
    const h = await boot();
    currentWorld().upstream.enqueue(
      { kind: 'tool_use', name: 'write_file', input: { path: 'hello.txt', content: 'hi\n' } },
      { kind: 'text', text: 'Wrote hello.txt as asked.' },
    );
    const ws = makeGitWorkspace(currentWorld().root);
    const first = await h.service.create({
      title: 'hello',
      prompt: 'write hello.txt',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
    });
    await waitFor(() => h.service.getTask(first.id)!.status === 'completed', 'the first task completed');
    const firstSession = h.service.getTask(first.id)!.sessionId!;
    assert.ok(firstSession);
    const requestsOfFirst = currentWorld().upstream.messageRequests().length;

    currentWorld().upstream.enqueue({ kind: 'text', text: 'Added a second line.' });
    const follow = await h.service.followUp(first.id, { prompt: 'now add a second line to hello.txt' });
    assert.notEqual(follow.id, first.id);
    assert.equal(follow.workspacePath, ws, 'the same folder as the first');
    await waitFor(() => h.service.getTask(follow.id)!.status === 'completed', 'the follow-up completed');

    // The agent resumed the first task's session: its first model request carries the first task's turns, then the new instructions.
    const request = currentWorld().upstream.messageRequests()[requestsOfFirst];
    const said = texts(request.body);
    assert.ok(said.includes('user: write hello.txt'), `the first task's prompt is in the conversation: ${JSON.stringify(said)}`);
    assert.ok(said.includes('assistant: Wrote hello.txt as asked.'), 'and its answer');
    assert.equal(said.at(-1), 'user: now add a second line to hello.txt', 'the follow-up instructions come last');
    // The same session (one transcript holding both), which the follow-up task records as its own.
    assert.equal(h.service.getTask(follow.id)!.sessionId, firstSession);
    const transcript = fs.readFileSync(
      path.join(engineDirs(path.join(currentWorld().root, 'globalStorage')).referenceSessionsDir, `${firstSession}.jsonl`),
      'utf8',
    );
    assert.match(transcript, /write hello\.txt/);
    assert.match(transcript, /now add a second line/);
    assert.match(transcript, /Added a second line\./);

    // Its own ticket (settled), its own History row; the first task's row and ticket unchanged.
    await waitFor(
      () => [first.id, follow.id].every((id) => h.service.ticketsOf(id).every((t) => t.settleState === 'settled')),
      'both tickets settled',
    );
    assert.equal(h.service.ticketsOf(follow.id).length, 1);
    assert.notEqual(h.service.ticketsOf(follow.id)[0].ticketId, h.service.ticketsOf(first.id)[0].ticketId);
    assert.deepEqual(
      h.service
        .history()
        .map((r) => r.taskId)
        .sort(),
      [first.id, follow.id].sort(),
    );

    // Its own card, marked as a follow-up of the first.
    const backend = createServiceBackend(h.service, h.store, BARE_HOST, h.questions);
    const panel = new PanelController(
      { postMessage: () => undefined, onDidReceiveMessage: () => ({ dispose() {} }) },
      backend,
      systemClock,
    );
    const snapshot = await panel.snapshot();
    panel.dispose();
    const card = snapshot.tasks.find((c) => c.id === follow.id)!;
    assert.deepEqual([card.followUpOfId, card.followUpOfTitle], [first.id, 'hello']);
    assert.equal(snapshot.tasks.find((c) => c.id === first.id)!.followUpOfId, null);
    const row = snapshot.history.find((r) => r.taskId === follow.id)!;
    assert.deepEqual([row.followUpOfId, row.followUpOfTitle], [first.id, 'hello']);
    assert.equal(snapshot.tasks.find((c) => c.id === first.id)!.actions.followUp, true);

    // Deleting the first task keeps the transcript the follow-up shares.
    await h.service.delete(first.id);
    assert.ok(
      fs.existsSync(path.join(engineDirs(path.join(currentWorld().root, 'globalStorage')).referenceSessionsDir, `${firstSession}.jsonl`)),
    );
  });

  it('a follow-up is refused, with nothing spent, while the task runs or another follow-up of its session has not finished', async () => {
    const h = await boot();
    currentWorld().upstream.enqueue({ kind: 'text', text: 'Done.' });
    const ws = makeGitWorkspace(currentWorld().root);
    const first = await h.service.create({ title: 'one', prompt: 'say done', permissionMode: 'plan', workspacePath: ws });
    await assert.rejects(h.service.followUp(first.id, { prompt: 'more' }), /Cannot follow up "one" yet: it is (queued|running)/);
    await waitFor(() => h.service.getTask(first.id)!.status === 'completed', 'completed');
    await assert.rejects(h.service.followUp(first.id, { prompt: '   ' }), /instructions must not be empty/);

    // Hold the next model request so the first follow-up stays unfinished.
    currentWorld().upstream.enqueue({ kind: 'hang' });
    const a = await h.service.followUp(first.id, { prompt: 'follow up A' });
    const takesBefore = h.service.listTasks().length;
    await assert.rejects(h.service.followUp(first.id, { prompt: 'follow up B' }), /already continues this session/);
    assert.equal(h.service.listTasks().length, takesBefore, 'no task was created');
    await h.service.cancel(a.id);
  });
});
