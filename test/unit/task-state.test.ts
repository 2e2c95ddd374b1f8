import assert from 'node:assert/strict';
import { deriveHistoryRow } from '../../src/core/history';
import {
  canEdit,
  canTransition,
  TASK_TRANSITIONS,
  terminalIsIrreversible,
  TRANSITIONS,
  type TaskTransition,
} from '../../src/core/task-state';
import { TASK_STATUSES, workspaceKeyOf, type OffPeakTask, type TaskStatus } from '../../src/core/types';
import { newTaskId } from '../../src/core/ids';

// The expected table, written out independently of src/core/task-state.ts:
// transition -> from-states where it applies (claim guard listed separately).
const EXPECTED_FROM: Record<TaskTransition, TaskStatus[]> = {
  pause: ['queued'],
  continue: ['paused'],
  markRunning: ['queued'],
  requeue: ['running', 'awaiting'],
  complete: ['running', 'awaiting'],
  fail: ['queued', 'running', 'awaiting'],
  cancel: ['queued', 'paused', 'running', 'awaiting', 'needs_input'],
  park: ['running', 'awaiting'],
  answerParked: ['needs_input'],
};
const EXPECTED_TO: Record<TaskTransition, TaskStatus> = {
  pause: 'paused',
  continue: 'queued',
  markRunning: 'running',
  requeue: 'queued',
  complete: 'completed',
  fail: 'failed',
  cancel: 'cancelled',
  park: 'needs_input',
  answerParked: 'queued',
};

function task(overrides: Partial<OffPeakTask> = {}): OffPeakTask {
  return {
    id: 't1',
    title: 'Title',
    prompt: 'Prompt',
    permissionMode: 'default',
    model: null,
    thoughtLevel: null,
    workspaceKey: '/w',
    workspacePath: '/w',
    workspaceIdentity: null,
    conversationId: null,
    sessionId: 'sess',
    status: 'queued',
    queuedAt: 1000,
    startedAt: null,
    endedAt: null,
    failureReason: null,
    filesChanged: null,
    serverTicketId: null,
    registeredAt: null,
    schedulable: false,
    queuePosition: null,
    nextPollAt: null,
    claimRunning: false,
    claimedAt: null,
    attemptCount: 0,
    lastError: null,
    settledAt: null,
    historyDeletedAt: null,
    createdAt: 1000,
    updatedAt: 1000,
    ...overrides,
  };
}

describe('core task state machine', () => {
  it('has exactly the expected transitions, from-states and targets', () => {
    assert.deepEqual([...TASK_TRANSITIONS].sort(), Object.keys(EXPECTED_FROM).sort());
    for (const t of TASK_TRANSITIONS) {
      assert.deepEqual([...TRANSITIONS[t].from].sort(), [...EXPECTED_FROM[t]].sort(), `from-states of ${t}`);
      assert.equal(TRANSITIONS[t].to, EXPECTED_TO[t], `target of ${t}`);
    }
  });

  it('never leaves a terminal state', () => {
    assert.equal(terminalIsIrreversible(), true);
    for (const status of ['completed', 'failed', 'cancelled'] as const) {
      for (const t of TASK_TRANSITIONS) {
        assert.equal(canTransition(task({ status, claimRunning: false }), t), false, `${t} from ${status}`);
        assert.equal(canTransition(task({ status, claimRunning: true }), t), false, `${t} from ${status} (claimed)`);
      }
    }
  });

  it('applies every transition from exactly its allowed states, with the claim guards', () => {
    for (const t of TASK_TRANSITIONS) {
      for (const status of TASK_STATUSES) {
        for (const claimRunning of [false, true]) {
          let expected = EXPECTED_FROM[t].includes(status);
          if (t === 'pause' && claimRunning) expected = false; // only an unclaimed queued task pauses
          if (t === 'markRunning' && !claimRunning) expected = false; // only the claimer starts it
          assert.equal(canTransition(task({ status, claimRunning }), t), expected, `${t} from ${status} claimed=${claimRunning}`);
        }
      }
    }
  });

  it('allows edits only while queued or paused', () => {
    for (const status of TASK_STATUSES) assert.equal(canEdit({ status }), status === 'queued' || status === 'paused', status);
  });

  it('derives workspace_key from the trimmed identity, else the path', () => {
    assert.equal(workspaceKeyOf('/p', null), '/p');
    assert.equal(workspaceKeyOf('/p', '  '), '/p');
    assert.equal(workspaceKeyOf('/p', ' ssh-remote+box '), 'ssh-remote+box');
  });

  it('generates distinct random task ids', () => {
    const ids = new Set(Array.from({ length: 200 }, () => newTaskId()));
    assert.equal(ids.size, 200);
    for (const id of ids) assert.match(id, /^[0-9a-f-]{36}$/);
  });
});

describe('deriveHistoryRow (History is derived, 0 or 1 row)', () => {
  const now = 50_000;
  it('has no row while never started and still queued or paused, or after the user hid it', () => {
    assert.equal(deriveHistoryRow(task({ status: 'queued' }), now), undefined);
    assert.equal(deriveHistoryRow(task({ status: 'paused' }), now), undefined);
    assert.ok(
      deriveHistoryRow(task({ status: 'cancelled', endedAt: 2000 }), now),
      'a task cancelled before it started has its row (below)',
    );
    assert.equal(deriveHistoryRow(task({ status: 'completed', startedAt: 2000, endedAt: 3000, historyDeletedAt: 4000 }), now), undefined);
  });

  it('a task that failed before its first segment has a Failure row with its reason, triggered when it failed, lasting nothing', () => {
    const row = deriveHistoryRow(task({ status: 'failed', endedAt: 7_000, failureReason: 'folder gone' }), now)!;
    assert.deepEqual([row.status, row.triggeredAt, row.durationMs, row.failureReason], ['failure', 7_000, 0, 'folder gone']);
  });

  it('a task cancelled before its first segment has a Skipped row saying so, triggered when it was cancelled, lasting nothing; a queued or paused one has none', () => {
    const row = deriveHistoryRow(task({ status: 'cancelled', endedAt: 8_000 }), now)!;
    assert.deepEqual(
      [row.status, row.triggeredAt, row.durationMs, row.failureReason],
      ['skipped', 8_000, 0, 'Cancelled before it started.'],
    );
    assert.equal(deriveHistoryRow(task({ status: 'queued' }), now), undefined);
    assert.equal(deriveHistoryRow(task({ status: 'paused' }), now), undefined);
  });

  it('maps statuses to History statuses and durations', () => {
    assert.deepEqual(
      (['running', 'completed', 'failed', 'cancelled', 'queued'] as const).map((status) => {
        const row = deriveHistoryRow(
          task({ status, startedAt: 10_000, endedAt: status === 'running' || status === 'queued' ? null : 20_000 }),
          now,
        )!;
        return [row.status, row.durationMs];
      }),
      [
        ['in_progress', 40_000],
        ['succeeded', 10_000],
        ['failure', 10_000],
        ['skipped', 10_000],
        ['in_progress', 40_000], // between two segments of a started task
      ],
    );
  });

  it('falls back to the prompt when the title is empty', () => {
    assert.equal(deriveHistoryRow(task({ title: '', status: 'running', startedAt: 1 }), now)!.title, 'Prompt');
  });
});
