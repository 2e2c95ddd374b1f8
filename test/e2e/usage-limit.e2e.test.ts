// The account's usage limit holds tasks, it does not fail them (docs/flows.md#usage-limits), end to
// end in Node: the real HostEngine, real reference-agent processes, and the REAL reference gateway
// with `accountLimits` on (loopback, an OffsetClock the test moves to the reset) in front of the
// scripted fake model upstream (a fixture standing in for the model API) answering with the
// unified rate-limit header shapes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { RuntimeEvent } from '../../src/agent/runtime/task-runtime';
import { systemClock } from '../../src/core/clock';
import type { HostEngine } from '../../src/engine/host-engine';
import type { GatewayConfig } from '../../src/gateway/config';
import { OffsetClock } from '../../src/gateway/authority/offset-clock';
import { accountUsageLimitResetAt, toTaskCard } from '../../src/panel/task-card';
import { usageLimitText } from '../../webview/card-extras';
import { unifiedLimitHeaders, usageLimitRejected, type RecordedRequest, type ScriptedReply } from '../fixtures/fake-anthropic-upstream';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { startTestEngine, waitFor } from './test-engine';

type Messages = { messages?: { role: string; content: string | { type: string; text?: string }[] }[] };

/** Which task a model request belongs to: its prompt names it ("task A: …"). */
function taskLetter(request: RecordedRequest): string {
  const first = (request.body as Messages).messages?.[0];
  const text = typeof first?.content === 'string' ? first.content : (first?.content.find((c) => c.type === 'text')?.text ?? '');
  return /task ([A-Z]):/.exec(text)?.[1] ?? '?';
}

/**
 * The reset as this machine sees it: the header's whole seconds, moved by the gateway's server time
 * against this clock (the same clock here, read a few ms apart on the round trip).
 */
function sameReset(seen: number | null | undefined, sentMs: number): void {
  const sent = Math.ceil(sentMs / 1000) * 1000;
  assert.ok(typeof seen === 'number' && Math.abs(seen - sent) < 1_000, `reset ${seen} is the one sent (${sent})`);
}

const hasToolResult = (request: RecordedRequest) =>
  ((request.body as Messages).messages ?? []).some((m) => typeof m.content !== 'string' && m.content.some((c) => c.type === 'tool_result'));

describe('usage limits are holds, not failures (reference agent, real gateway with account limits)', function () {
  let world: GatewayWorld;
  let clock: OffsetClock;
  let engine: HostEngine | undefined;
  let events: RuntimeEvent[];

  afterEach(async () => {
    await engine?.dispose();
    engine = undefined;
    await world.close();
  });

  async function startEngine(usageLimitParkMs?: number, gateway: Partial<GatewayConfig> = {}): Promise<HostEngine> {
    events = [];
    clock = new OffsetClock(systemClock);
    world = await startWorld({ accountLimits: true, segmentCapacity: 3, ...gateway }, clock);
    engine = await startTestEngine({
      storageDir: path.join(world.root, 'globalStorage'),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
      usageLimitParkMs,
      onEvent: (e) => events.push(e),
    });
    const h = engine;
    await waitFor(() => h.service.isLeader, 'the lease');
    return h;
  }

  /** Each task runs one step (`echo <letter> >> steps.log`, after `gate` exists when given), then says it is done; `refuse` decides which request gets the usage-limit 429. */
  function script(refuse: (request: RecordedRequest) => ScriptedReply | undefined, gates: Record<string, string> = {}): void {
    world.upstream.setDefaultReply((request) => {
      const refusal = refuse(request);
      if (refusal) return refusal;
      const letter = taskLetter(request);
      if (hasToolResult(request)) return { kind: 'text', text: `task ${letter} is done.` };
      const gate = gates[letter] ? `while [ ! -f '${gates[letter]}' ]; do sleep 0.1; done; ` : '';
      return { kind: 'tool_use', name: 'run_command', input: { command: `${gate}echo ${letter} >> steps.log` } };
    });
  }

  const create = (h: HostEngine, letter: string, ws: string) =>
    h.service.create({
      title: `task ${letter}`,
      prompt: `task ${letter}: run the step`,
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
    });
  const steps = (ws: string) => fs.readFileSync(path.join(ws, 'steps.log'), 'utf8').trim().split('\n');

  it('a rejected 5-hour window (reset 20 s ahead) holds every running task and promotes nothing; the upstream sees one request during the hold; at the reset the same sessions resume and complete, no step run twice', async () => {
    const h = await startEngine();
    const [wsA, wsB, wsC] = ['a', 'b', 'c'].map((n) => makeGitWorkspace(world.root, n));
    const gateA = path.join(world.root, 'gate-a');
    const gateB = path.join(world.root, 'gate-b');
    let resetAt = 0;
    let refusedAt = 0;
    script(
      (request) => {
        // Task A's request after its step: the account's 5-hour window is used up.
        if (refusedAt === 0 && taskLetter(request) === 'A' && hasToolResult(request)) {
          refusedAt = request.seq;
          resetAt = clock.now() + 20_000;
          return usageLimitRejected({
            reset5hAt: resetAt,
            status5h: 'rejected',
            reset7dAt: clock.now() + 5 * 86_400_000,
            status7d: 'allowed',
            claim: 'five_hour',
          });
        }
        return undefined;
      },
      { A: gateA, B: gateB },
    );
    const a = await create(h, 'A', wsA);
    const b = await create(h, 'B', wsB);
    // Both agents asked once and wait in their steps: no request of B can cross A's refusal.
    await waitFor(
      () => new Set(world.upstream.messageRequests().map(taskLetter)).size === 2 || undefined,
      'the first request of each task',
      60_000,
    );
    fs.writeFileSync(gateA, '');
    await waitFor(
      () => refusedAt > 0 && events.some((e) => e.type === 'usage-limit' && e.taskId === a.id && e.resetAt !== null),
      'task A held by the usage limit',
      60_000,
    );
    const seenAtRefusal = world.upstream.messageRequests().length;
    assert.equal(seenAtRefusal, refusedAt, 'the refusal is the last request the upstream saw');

    // Task B's step finishes during the hold: its next request is held at the gateway, not sent.
    fs.writeFileSync(gateB, '');
    await waitFor(
      () => events.some((e) => e.type === 'usage-limit' && e.taskId === b.id && e.resetAt !== null),
      'task B held by the usage limit',
      60_000,
    );
    // A task queued during the hold is not promoted, though capacity is free.
    const c = await create(h, 'C', wsC);
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(h.service.getTask(c.id)?.status, 'queued');
    assert.equal(h.service.ticketsOf(c.id)[0]?.serverState, 'queued');
    // The queued task's card says until when too (from its ticket's status), and so does the status bar's account state.
    const cCard = await waitFor(
      () => {
        const card = toTaskCard(h.service.getTask(c.id)!, h.service.ticketsOf(c.id));
        return card.usageLimitResetAt != null && card;
      },
      'the queued card to show the reset',
      30_000,
    );
    sameReset(cCard.usageLimitResetAt, resetAt);
    sameReset(
      accountUsageLimitResetAt(h.service.listTasks(), (id) => h.service.ticketsOf(id), clock.now()),
      resetAt,
    );
    assert.equal(world.upstream.messageRequests().length, seenAtRefusal, 'nothing went upstream during the hold');
    for (const id of [a.id, b.id]) {
      assert.equal(h.service.getTask(id)?.status, 'running', 'held, not failed');
      const card = toTaskCard(h.service.getTask(id)!, h.service.ticketsOf(id));
      sameReset(card.usageLimitResetAt, resetAt);
      assert.match(
        usageLimitText(card.usageLimitResetAt!, clock.now()) ?? '',
        /^Waiting for your usage limit to reset at \d\d:\d\d · in 1 min$/,
      );
    }
    const sessions = [a.id, b.id].map((id) => h.service.getTask(id)?.sessionId);

    clock.advance(Math.ceil(resetAt / 1000) * 1000 - clock.now());
    for (const id of [a.id, b.id, c.id])
      await waitFor(() => h.service.getTask(id)?.status === 'completed' && h.service.getTask(id), `task ${id} to complete`, 60_000);
    assert.deepEqual(
      [a.id, b.id].map((id) => h.service.getTask(id)?.sessionId),
      sessions,
      'the same sessions went on',
    );
    assert.deepEqual([steps(wsA), steps(wsB), steps(wsC)], [['A'], ['B'], ['C']], 'each step ran once');
    for (const id of [a.id, b.id]) {
      const tickets = h.service.ticketsOf(id);
      assert.equal(tickets.length, 1, 'held in its one segment, no new ticket');
      assert.equal(tickets[0].endReason, 'completed');
    }
    // The first request after the reset is a held one being sent again (not a new ticket's).
    const after = world.upstream.messageRequests().slice(seenAtRefusal);
    assert.ok(after.length >= 3);
    assert.ok(['A', 'B'].includes(taskLetter(after[0])) && hasToolResult(after[0]));
  });

  it('a reset further away than the park bound parks the task (segment ended, not failed, ticket settled) and it resumes the same session at the reset', async () => {
    const h = await startEngine(2_000);
    const ws = makeGitWorkspace(world.root, 'p');
    let resetAt = 0;
    script((request) => {
      if (resetAt === 0 && hasToolResult(request)) {
        resetAt = clock.now() + 20_000;
        return usageLimitRejected({ resetAt, reset5hAt: resetAt, status5h: 'rejected' });
      }
      return undefined;
    });
    const task = await create(h, 'P', ws);
    await waitFor(() => h.service.ticketsOf(task.id)[0]?.endReason === 'usage_limit', 'the segment to end for the usage limit', 60_000);
    const first = h.service.ticketsOf(task.id)[0];
    await waitFor(() => h.service.ticketsOf(task.id)[0]?.settleState === 'settled', 'the first ticket settled', 30_000);
    await waitFor(() => h.service.ticketsOf(task.id)[1]?.serverState === 'queued', 'a new ticket waiting in the queue', 30_000);
    const parked = h.service.getTask(task.id)!;
    assert.equal(parked.status, 'queued', 'parked, not failed');
    sameReset(first.usageLimitResetAt, resetAt);
    sameReset(toTaskCard(parked, h.service.ticketsOf(task.id)).usageLimitResetAt, resetAt);
    assert.equal(world.gateway.authority.now() < resetAt, true);
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(h.service.ticketsOf(task.id)[1]?.serverState, 'queued', 'not promoted before the reset');

    clock.advance(Math.ceil(resetAt / 1000) * 1000 - clock.now());
    await waitFor(() => h.service.getTask(task.id)?.status === 'completed', 'the task to complete after the reset', 60_000);
    const started = events.filter(
      (e): e is Extract<RuntimeEvent, { type: 'segment-started' }> => e.type === 'segment-started' && e.taskId === task.id,
    );
    assert.equal(started.length, 2);
    assert.equal(started[1].resume, true);
    assert.equal(started[1].sessionId, started[0].sessionId, 'the same session resumed');
    assert.deepEqual(steps(ws), ['P'], 'the step ran once');
  });

  it('stopAtUtilization: an answer above the threshold lets the running task finish and starts no other until the window resets', async () => {
    const h = await startEngine(undefined, { segmentCapacity: 1, stopAtUtilization: 0.8 });
    const [wsA, wsB] = ['a', 'b'].map((n) => makeGitWorkspace(world.root, n));
    let resetAt = 0;
    script((request) => {
      // Task A's first answer reports 85 % of the 5-hour window used.
      if (resetAt === 0 && taskLetter(request) === 'A') {
        resetAt = clock.now() + 20_000;
        return {
          kind: 'tool_use',
          name: 'run_command',
          input: { command: 'echo A >> steps.log' },
          headers: unifiedLimitHeaders({
            status: 'allowed_warning',
            utilization5h: 0.85,
            reset5hAt: resetAt,
            utilization7d: 0.3,
            reset7dAt: clock.now() + 86_400_000,
          }),
        };
      }
      return undefined;
    });
    const a = await create(h, 'A', wsA);
    await waitFor(() => resetAt > 0, 'the warning answer');
    const b = await create(h, 'B', wsB);
    await waitFor(() => h.service.getTask(a.id)?.status === 'completed', 'the running task to finish', 60_000);
    await waitFor(() => h.service.ticketsOf(a.id)[0]?.settleState === 'settled', 'its ticket settled (capacity free)', 30_000);
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(h.service.ticketsOf(b.id)[0]?.serverState, 'queued', 'no new task starts above the threshold');
    assert.equal(h.service.getTask(b.id)?.startedAt, null);
    // Its card says until when, from the gateway's status of its queued ticket.
    const card = await waitFor(
      () => {
        const c = toTaskCard(h.service.getTask(b.id)!, h.service.ticketsOf(b.id));
        return c.usageLimitResetAt != null && c;
      },
      'the queued card to show the reset',
      30_000,
    );
    sameReset(card.usageLimitResetAt, resetAt);
    clock.advance(Math.ceil(resetAt / 1000) * 1000 - clock.now());
    await waitFor(() => h.service.getTask(b.id)?.status === 'completed', 'the next task after the reset', 60_000);
    assert.deepEqual([steps(wsA), steps(wsB)], [['A'], ['B']]);
  });
});
