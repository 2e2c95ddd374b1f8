import assert from 'node:assert/strict';
import type { OffPeakTask, TicketRecord } from '../../src/core/types';
import { scheduledForOf, toTaskCard } from '../../src/panel/task-card';
import { epochAtWallTime } from '../../src/core/zoned-time';
import { localDateTimeMs } from '../../webview/task-form';
import { availabilityView } from '../../src/panel/service-views';
import { cancelConfirmation, deleteConfirmation } from '../../src/panel/confirmations';
import { gatewayOutageText, sameFields, sameUsage } from '../../webview/card-extras';
import { answerOutcomeText, askDeadlineText, availabilityText, formatDuration, groupCards, phaseLabel } from '../../webview/format';
import type { PendingAsk } from '../../src/agent/questions/asks';

function task(overrides: Partial<OffPeakTask> = {}): OffPeakTask {
  return {
    id: 't1',
    title: '',
    prompt: 'Fix the flaky test\nand more',
    permissionMode: 'default',
    model: null,
    thoughtLevel: null,
    workspaceKey: '/ws',
    workspacePath: '/ws',
    workspaceIdentity: null,
    conversationId: null,
    sessionId: null,
    status: 'queued',
    queuedAt: 1,
    startedAt: null,
    endedAt: null,
    failureReason: null,
    filesChanged: null,
    serverTicketId: 'k1',
    registeredAt: 1,
    schedulable: false,
    queuePosition: 3,
    nextPollAt: null,
    claimRunning: false,
    claimedAt: null,
    attemptCount: 0,
    lastError: null,
    settledAt: null,
    historyDeletedAt: null,
    createdAt: 1,
    updatedAt: 1,
    ...overrides,
  };
}

function pendingAsk(overrides: Partial<PendingAsk> = {}): PendingAsk {
  return {
    id: 'q1',
    taskId: 't1',
    tool: 'write_file',
    summary: 'write hello.txt (12 bytes)',
    input: 'path: hello.txt\ncontent: hello world!',
    inputDigest: 'd'.repeat(64),
    askedAt: 100,
    deadlineAt: 600_100,
    ...overrides,
  };
}

function ticket(overrides: Partial<TicketRecord> = {}): TicketRecord {
  return {
    ticketId: 'k1',
    taskId: 't1',
    ordinal: 1,
    origin: 'take',
    serverState: 'queued',
    queuePosition: 3,
    takenAt: 1,
    readyAt: null,
    readyDeadline: null,
    activeAt: null,
    expiresAt: null,
    lastStatusAt: null,
    nextPollAt: null,
    segmentStartedAt: null,
    segmentEndedAt: null,
    endReason: null,
    lastError: null,
    gatewayUnreachableSince: null,
    usage: null,
    settleState: 'none',
    settleReason: null,
    settleAttempts: 0,
    nextSettleAt: null,
    settledAt: null,
    createdAt: 1,
    updatedAt: 1,
    ...overrides,
  };
}

describe('task card', () => {
  it('a task waiting for its "not before" time says "Scheduled for Tue 02:00" (docs/flows.md#schedules-and-chains)', () => {
    const now = Date.UTC(2026, 11, 3, 12); // Thu 3 Dec
    const notBefore = epochAtWallTime({ year: 2026, month: 12, day: 8 }, 2 * 60, 'Europe/Berlin');
    const waiting = task({ serverTicketId: null, registeredAt: null, queuePosition: null, notBefore });
    const card = { ...toTaskCard(waiting, []), ...scheduledForOf(waiting, now, 'Europe/Berlin') };
    assert.equal(card.phase, 'scheduled');
    assert.equal(phaseLabel(card), 'Scheduled for Tue 02:00');
    const taken = task({ notBefore });
    assert.equal(toTaskCard(taken, [ticket()]).phase, 'in_queue', 'once its ticket is taken it is in the queue');
    assert.deepEqual(scheduledForOf(taken, now, 'Europe/Berlin'), {});
    assert.equal(toTaskCard(task({ serverTicketId: null, notBefore, status: 'paused' }), []).phase, 'paused');
  });

  it('a task waiting for another says "After <task>" (docs/flows.md#schedules-and-chains)', () => {
    const card = toTaskCard(task({ serverTicketId: null, queuePosition: null, afterTaskId: 't0', afterTitle: 'Refactor' }), []);
    assert.equal(card.phase, 'after');
    assert.equal(phaseLabel(card), 'After Refactor');
    assert.equal(
      toTaskCard(task({ afterTaskId: 't0', afterTitle: 'Refactor' }), [ticket()]).phase,
      'in_queue',
      'once it took its ticket it is in the queue',
    );
  });

  it('the form\'s "Not before" field is read on this machine\'s clock', () => {
    assert.equal(localDateTimeMs('2026-12-08T02:00'), new Date(2026, 11, 8, 2, 0).getTime());
    assert.equal(localDateTimeMs(''), undefined);
  });

  it('a queued task shows its queue position, then ready once schedulable', () => {
    const card = toTaskCard(task(), [ticket()]);
    assert.equal(card.phase, 'in_queue');
    assert.equal(phaseLabel(card), 'In queue · #3');
    assert.equal(card.title, 'Fix the flaky test', 'an empty title falls back to the prompt');
    assert.equal(toTaskCard(task({ schedulable: true }), [ticket({ serverState: 'ready' })]).phase, 'ready');
  });

  it('a queued task without a live ticket is taking one', () => {
    assert.equal(toTaskCard(task({ serverTicketId: null }), []).phase, 'taking_ticket');
    assert.equal(toTaskCard(task(), [ticket({ serverState: 'expired' })]).phase, 'taking_ticket');
  });

  it('running says "waiting for admission" until the segment has an admitted model request', () => {
    const running = task({ status: 'running', startedAt: 10, claimRunning: true });
    assert.equal(toTaskCard(running, [ticket({ serverState: 'ready', segmentStartedAt: 10 })]).phase, 'waiting_for_admission');
    assert.equal(phaseLabel(toTaskCard(running, [ticket({ segmentStartedAt: 10 })])), 'Waiting for admission');
    assert.equal(toTaskCard(running, [ticket({ serverState: 'active', segmentStartedAt: 10, activeAt: 20 })]).phase, 'running');
  });

  it('item 4: a running task whose requests wait for the gateway says since when; once it ran out of the running state it does not', () => {
    const since = new Date(2026, 11, 1, 2, 14, 30).getTime();
    const running = task({ status: 'running', startedAt: 10 });
    const outage = ticket({ serverState: 'active', segmentStartedAt: 10, activeAt: 20, gatewayUnreachableSince: since });
    const card = toTaskCard(running, [outage]);
    assert.equal(card.gatewayUnreachableSince, since);
    assert.equal(card.phase, 'running', 'the task has not failed: it waits');
    assert.equal(gatewayOutageText(since), 'Gateway unreachable since 02:14 · waiting');
    assert.equal(
      toTaskCard(running, [ticket({ serverState: 'active', segmentStartedAt: 10, activeAt: 20 })]).gatewayUnreachableSince,
      null,
    );
    assert.equal(toTaskCard(task({ status: 'failed', startedAt: 10, endedAt: 30 }), [outage]).gatewayUnreachableSince, null);
  });

  it('a task left "awaiting" by an old build reads like running: waiting for admission, then running once admitted', () => {
    const awaiting = task({ status: 'awaiting', startedAt: 10 });
    assert.equal(toTaskCard(awaiting, [ticket({ serverState: 'ready', segmentStartedAt: 10 })]).phase, 'waiting_for_admission');
    assert.equal(toTaskCard(awaiting, [ticket({ serverState: 'active', segmentStartedAt: 10, activeAt: 20 })]).phase, 'running');
    assert.deepEqual(toTaskCard(awaiting, []).actions, {
      pause: false,
      continue: false,
      edit: false,
      cancel: true,
      delete: true,
      followUp: false,
      openSession: false,
    });
  });

  it('offers only the actions the state machine allows', () => {
    assert.deepEqual(toTaskCard(task(), []).actions, {
      pause: true,
      continue: false,
      edit: true,
      cancel: true,
      delete: true,
      followUp: false,
      openSession: false,
    });
    assert.equal(toTaskCard(task({ claimRunning: true }), []).actions.pause, false, 'a claimed task cannot be paused');
    assert.deepEqual(toTaskCard(task({ status: 'paused' }), []).actions, {
      pause: false,
      continue: true,
      edit: true,
      cancel: true,
      delete: true,
      followUp: false,
      openSession: false,
    });
    assert.deepEqual(toTaskCard(task({ status: 'completed', endedAt: 5 }), []).actions, {
      pause: false,
      continue: false,
      edit: false,
      cancel: false,
      delete: true,
      followUp: false,
      openSession: false,
    });
  });

  it('a finished task with a session offers Follow up… and Open session; a follow-up names the task it continues', () => {
    const done = task({ status: 'completed', startedAt: 3, endedAt: 5, sessionId: '0f7d2c1e-8b8a-4b8e-9a53-2f1a2b3c4d5e' });
    assert.deepEqual([toTaskCard(done, []).actions.followUp, toTaskCard(done, []).actions.openSession], [true, true]);
    const running = task({ status: 'running', startedAt: 3, sessionId: '0f7d2c1e-8b8a-4b8e-9a53-2f1a2b3c4d5e' });
    assert.deepEqual(
      [toTaskCard(running, []).actions.followUp, toTaskCard(running, []).actions.openSession],
      [false, false],
      'its Terminal shows it live',
    );
    const link = {
      taskId: 'task-1',
      followUpOf: 'first',
      ofTitle: 'the first',
      sessionId: done.sessionId!,
      agent: 'reference',
      createdAt: 1,
    };
    const card = toTaskCard(task(), [], [], false, link);
    assert.deepEqual([card.followUpOfId, card.followUpOfTitle], ['first', 'the first']);
    assert.deepEqual([toTaskCard(task(), []).followUpOfId, toTaskCard(task(), []).followUpOfTitle], [null, null]);
  });

  it('counts segments from the ledger, not tickets', () => {
    const tickets = [
      ticket({ ticketId: 'a', segmentStartedAt: 1 }),
      ticket({ ticketId: 'b', segmentStartedAt: 2 }),
      ticket({ ticketId: 'c' }),
    ];
    assert.equal(toTaskCard(task({ status: 'running', serverTicketId: 'b' }), tickets).segments, 2);
  });

  it('a queued task that ran before waits for its next segment, with its queue position', () => {
    const between = toTaskCard(task({ startedAt: 5, queuePosition: 2 }), [
      ticket({ ticketId: 'k0', segmentStartedAt: 5, segmentEndedAt: 9, endReason: 'expired' }),
      ticket(),
    ]);
    assert.equal(between.phase, 'between_segments');
    assert.equal(phaseLabel(between), 'Waiting for the next segment · #2');
    assert.equal(phaseLabel(toTaskCard(task({ status: 'paused', queuePosition: 4 }), [])), 'Paused · #4');
  });

  it('an automatic title says so, a given one does not', () => {
    assert.equal(toTaskCard(task(), []).autoTitle, true);
    assert.equal(toTaskCard(task({ title: 'Mine' }), []).autoTitle, false);
  });

  it('a card re-renders only for a change: the same fields (===) are the same, new usage objects with the same counts too', () => {
    const a = { pause: true, cancel: false, title: 't' };
    assert.equal(sameFields(a, { ...a }, ['pause', 'cancel']), true);
    assert.equal(sameFields(a, { ...a, cancel: true }, ['pause', 'cancel']), false);
    assert.equal(sameFields(a, { ...a, title: 'other' }, ['pause', 'cancel']), true, 'only the named fields count');
    const usage = { model: 'm', inputTokens: 1, outputTokens: 2, cacheReadTokens: 3, cacheWriteTokens: 4, requests: 5 };
    assert.equal(sameUsage(usage, { ...usage }), true);
    assert.equal(sameUsage(usage, { ...usage, requests: 6 }), false);
    assert.equal(sameUsage(usage, null), false);
    assert.equal(sameUsage(null, null), true);
  });

  it('formats durations for people', () => {
    assert.equal(formatDuration(59_400), '59s');
    assert.equal(formatDuration(61_000), '1m 01s');
    assert.equal(formatDuration(3 * 3600_000 + 120_000), '3h 02m');
  });

  it('availability: reason text and a countdown instead of codes and timestamps', () => {
    const health = { lastSuccessAt: 1_000, nextCheckAt: 50_000 };
    assert.equal(availabilityText(availabilityView({ status: 'enabled', canTakeNumber: 3, checkedAt: 0 }, undefined), 0), undefined);
    const quota = availabilityView({ status: 'disabled', reason: 'quota', nextTakeAt: 10_000 + 252_000, checkedAt: 0 }, undefined, health);
    assert.equal(quota.kind, 'limited');
    assert.equal(availabilityText(quota, 10_000), 'The off-peak ticket quota is used up for now. You can queue a task again in 4m 12s.');
    assert.equal(availabilityText(quota, 10_000 + 252_000), 'The off-peak ticket quota is used up for now. Checking again…');
    const down = availabilityView({ status: 'error', message: 'ECONNREFUSED', checkedAt: 0 }, undefined, {
      lastSuccessAt: 1_000,
      nextCheckAt: 40_000,
    });
    assert.equal(down.kind, 'unreachable');
    assert.equal(availabilityText(down, 31_000), 'The gateway cannot be reached (ECONNREFUSED). Next try in 9s. Last reached 30s ago.');
    const enabled = { status: 'enabled' as const, canTakeNumber: 1, checkedAt: 0 };
    assert.equal(availabilityView(enabled, { exposed: false, planEligible: true, upgradeHint: null, upgradeUrl: null }).kind, 'hidden');
    const locked = availabilityView(enabled, { exposed: true, planEligible: false, upgradeHint: 'Upgrade', upgradeUrl: 'https://x.test' });
    assert.deepEqual(
      [locked.kind, locked.canCreate, locked.upgradeHint, locked.upgradeUrl],
      ['plan_locked', false, 'Upgrade', 'https://x.test'],
    );
    assert.equal(
      availabilityView({ status: 'disabled', reason: 'not_eligible', checkedAt: 0 }, undefined).kind,
      'plan_locked',
      'a 3101 locks even before configs load',
    );
  });

  it('sections: active cards follow the queue, finished cards the most recent first', () => {
    const cards = [
      toTaskCard(task({ id: 'a', queuePosition: 3, queuedAt: 1 }), []),
      toTaskCard(task({ id: 'b', queuePosition: 1, queuedAt: 2 }), []),
      toTaskCard(task({ id: 'c', status: 'paused', queuePosition: 2 }), []),
      toTaskCard(task({ id: 'd', status: 'completed', endedAt: 10 }), []),
      toTaskCard(task({ id: 'e', status: 'cancelled', endedAt: 20 }), []),
      toTaskCard(task({ id: 'f', status: 'awaiting', startedAt: 1 }), []),
    ];
    const g = groupCards(cards);
    assert.deepEqual(
      g.queued.map((c) => c.id),
      ['b', 'a'],
    );
    assert.deepEqual(
      g.paused.map((c) => c.id),
      ['c'],
    );
    assert.deepEqual(
      g.needs_input.map((c) => c.id),
      ['f'],
    );
    assert.deepEqual(
      g.finished.map((c) => c.id),
      ['e', 'd'],
    );
  });

  it('cancel always asks and says what happens to a running agent; delete asks unless the task is finished', () => {
    assert.match(
      cancelConfirmation(task({ status: 'running', claimRunning: true, title: 'Build' })).detail,
      /agent running this task is stopped/,
    );
    assert.match(cancelConfirmation(task()).detail, /leaves the gateway queue/);
    assert.match(deleteConfirmation(task({ status: 'running', claimRunning: true }))!.detail, /stopped now.*cannot be undone/);
    assert.ok(deleteConfirmation(task()), 'a queued task asks too');
    assert.equal(deleteConfirmation(task({ status: 'completed', endedAt: 2 })), undefined);
    const withTranscript = deleteConfirmation(task({ status: 'completed', endedAt: 2 }), true)!;
    assert.deepEqual(
      [withTranscript.action, withTranscript.alternative],
      ['Delete Task', 'Delete Task and Session'],
      'a task with a transcript of ours asks whether the session goes too',
    );
    assert.match(
      deleteConfirmation(task({ status: 'running', claimRunning: true }), true)!.detail,
      /cannot be undone\. The agent's session transcript .* is kept unless you also delete the session\./,
    );
    assert.equal(
      cancelConfirmation(task({ title: 'x'.repeat(100) })).message.length <= 70,
      true,
      'a long title is shortened in the question',
    );
  });

  it("a running task's open question makes the card need input, with the question, tool and deadline", () => {
    const running = task({ status: 'running', startedAt: 10, claimRunning: true });
    const card = toTaskCard(running, [ticket({ serverState: 'active', segmentStartedAt: 10, activeAt: 20 })], [pendingAsk()]);
    assert.deepEqual(card.ask, {
      id: 'q1',
      tool: 'write_file',
      question: 'write hello.txt (12 bytes)',
      input: 'path: hello.txt\ncontent: hello world!',
      inputDigest: 'd'.repeat(64),
      askedAt: 100,
      deadlineAt: 600_100,
      more: 0,
    });
    assert.equal(card.status, 'running', 'the task keeps running while its agent waits');
    assert.equal(phaseLabel(card), 'Needs input');
    assert.deepEqual(
      groupCards([card]).needs_input.map((c) => c.id),
      ['t1'],
    );
    assert.deepEqual(groupCards([card]).running, []);
    assert.equal(toTaskCard(running, []).ask, null, 'no question, no ask');
    assert.equal(groupCards([toTaskCard(running, [])]).running.length, 1);
  });

  it('the card shows the oldest question of its own task, counts the others, and none once the task stopped running', () => {
    const running = task({ status: 'running', startedAt: 10 });
    const asks = [
      pendingAsk({ id: 'late', askedAt: 300 }),
      pendingAsk({ id: 'early', askedAt: 200 }),
      pendingAsk({ id: 'other', taskId: 't2', askedAt: 1 }),
    ];
    const card = toTaskCard(running, [], asks);
    assert.equal(card.ask?.id, 'early');
    assert.equal(card.ask?.more, 1, "another task's question is not counted");
    assert.equal(toTaskCard(task({ status: 'completed', startedAt: 10, endedAt: 20 }), [], asks).ask, null);
    assert.equal(toTaskCard(task(), [], asks).ask, null, 'a queued task has no agent to answer');
  });

  it('the deadline counts down, and each answer outcome reads as a sentence', () => {
    const ask = toTaskCard(task({ status: 'running', startedAt: 10 }), [], [pendingAsk({ deadlineAt: 100_000 })]).ask!;
    assert.equal(askDeadlineText(ask, 100_000 - 65_000), 'Denied automatically in 1m 05s.');
    assert.equal(askDeadlineText({ ...ask, more: 2 }, 100_000 - 5_000), 'Denied automatically in 5s (2 more waiting).');
    assert.equal(askDeadlineText(ask, 100_001), 'Denying…');
    assert.equal(answerOutcomeText('allow', 'accepted', 'run_command'), 'Allowed: the agent goes on with run_command.');
    assert.equal(answerOutcomeText('deny', 'accepted', 'run_command'), 'Denied: the agent was refused run_command.');
    assert.match(answerOutcomeText('allow', 'already-answered', 'x'), /already answered.*not used/);
    assert.match(answerOutcomeText('deny', 'unknown', 'x'), /no longer open/);
  });
});
