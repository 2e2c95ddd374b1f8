import assert from 'node:assert/strict';
import type { OffPeakTask, TicketRecord } from '../../src/core/types';
import { toTaskCard } from '../../src/panel/task-card';
import { phaseLabel, formatDuration, availabilityText } from '../../webview/format';

function task(overrides: Partial<OffPeakTask> = {}): OffPeakTask {
  return {
    id: 't1', title: '', prompt: 'Fix the flaky test\nand more', permissionMode: 'default', model: null, thoughtLevel: null,
    workspaceKey: '/ws', workspacePath: '/ws', workspaceIdentity: null, conversationId: null, sessionId: null,
    status: 'queued', queuedAt: 1, startedAt: null, endedAt: null, failureReason: null, filesChanged: null,
    serverTicketId: 'k1', registeredAt: 1, schedulable: false, queuePosition: 3, nextPollAt: null,
    claimRunning: false, claimedAt: null, attemptCount: 0, lastError: null, settledAt: null, historyDeletedAt: null,
    createdAt: 1, updatedAt: 1, ...overrides,
  };
}

function ticket(overrides: Partial<TicketRecord> = {}): TicketRecord {
  return {
    ticketId: 'k1', taskId: 't1', ordinal: 1, origin: 'take', serverState: 'queued', queuePosition: 3, takenAt: 1,
    readyAt: null, readyDeadline: null, activeAt: null, expiresAt: null, lastStatusAt: null, nextPollAt: null,
    segmentStartedAt: null, segmentEndedAt: null, endReason: null, lastError: null, settleState: 'none',
    settleReason: null, settleAttempts: 0, nextSettleAt: null, settledAt: null, createdAt: 1, updatedAt: 1, ...overrides,
  };
}

describe('task card', () => {
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

  it('offers only the actions the state machine allows', () => {
    assert.deepEqual(toTaskCard(task(), []).actions, { pause: true, continue: false, edit: true, cancel: true, delete: true });
    assert.equal(toTaskCard(task({ claimRunning: true }), []).actions.pause, false, 'a claimed task cannot be paused');
    assert.deepEqual(toTaskCard(task({ status: 'paused' }), []).actions, { pause: false, continue: true, edit: true, cancel: true, delete: true });
    assert.deepEqual(toTaskCard(task({ status: 'completed', endedAt: 5 }), []).actions, { pause: false, continue: false, edit: false, cancel: false, delete: true });
  });

  it('counts segments from the ledger, not tickets', () => {
    const tickets = [ticket({ ticketId: 'a', segmentStartedAt: 1 }), ticket({ ticketId: 'b', segmentStartedAt: 2 }), ticket({ ticketId: 'c' })];
    assert.equal(toTaskCard(task({ status: 'running', serverTicketId: 'b' }), tickets).segments, 2);
  });

  it('formats durations and availability for people', () => {
    assert.equal(formatDuration(59_400), '59s');
    assert.equal(formatDuration(61_000), '1m 1s');
    assert.equal(formatDuration(3 * 3600_000 + 120_000), '3h 2m');
    assert.equal(availabilityText({ canCreate: true }, 0), undefined);
    assert.match(availabilityText({ canCreate: false, reason: 'Ticket limit reached', nextTakeAt: 10_000 }, 0)!, /Ticket limit reached · next at/);
  });
});
