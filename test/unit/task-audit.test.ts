// The Output channel's lifecycle lines (src/engine/task-audit.ts).
import assert from 'node:assert/strict';
import type { OffPeakTask } from '../../src/core/types';
import { TaskAuditLog } from '../../src/engine/task-audit';

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

describe('task audit log (Output channel)', () => {
  it("item 10: each task's lifecycle is a line: queued, segment, admitted, question, segment end, new ticket, end, deleted", () => {
    const lines: string[] = [];
    const audit = new TaskAuditLog((l) => lines.push(l));
    audit.tasks([]);
    const queued = task();
    audit.tasks([queued]);
    const ask = {
      id: 'q1',
      taskId: 't1',
      tool: 'write_file',
      summary: 'write a.txt (3 bytes)',
      input: 'a.txt',
      inputDigest: 'd',
      askedAt: 5,
      deadlineAt: 10,
    };
    audit.runtimeEvent({ type: 'segment-started', taskId: 't1', ticketId: 'k1', sessionId: 's', resume: false, pid: 1, at: 2 }, queued);
    audit.tasks([task({ status: 'running', startedAt: 2 })]);
    audit.runtimeEvent({ type: 'admitted', taskId: 't1', ticketId: 'k1', at: 3 }, queued);
    audit.runtimeEvent({ type: 'input-needed', taskId: 't1', ask }, queued);
    audit.runtimeEvent({ type: 'input-answered', taskId: 't1', ask, decision: 'deny', by: 'timeout', at: 6 }, queued);
    audit.runtimeEvent({ type: 'segment-ended', taskId: 't1', ticketId: 'k1', outcome: { kind: 'segment-expired' }, at: 7 }, queued);
    audit.tasks([task({ status: 'queued', startedAt: 2, serverTicketId: 'k2' })]);
    audit.tasks([task({ status: 'completed', startedAt: 2, endedAt: 9, serverTicketId: 'k2', filesChanged: 3 })]);
    audit.tasks([]);
    assert.deepEqual(lines, [
      'tasks: 0 known',
      'task "Fix the flaky test": queued (default), ticket taken',
      'task "Fix the flaky test": segment started, new session',
      'task "Fix the flaky test": running',
      'task "Fix the flaky test": admitted: the gateway accepted its first model request of this segment',
      'task "Fix the flaky test": asks: write_file: write a.txt (3 bytes)',
      'task "Fix the flaky test": question answered: denied automatically (nobody answered in time)',
      'task "Fix the flaky test": segment ended: the off-peak segment ended (time limit); the task resumes with a new ticket',
      'task "Fix the flaky test": new ticket taken',
      'task "Fix the flaky test": back in the queue for its next segment',
      'task "Fix the flaky test": completed (3 files changed)',
      'task "Fix the flaky test": deleted',
    ]);
    assert.ok(
      lines.every((l) => !l.includes('k1') && !l.includes('k2')),
      'no ticket id in the log',
    );
  });

  it('item 10: a title with line breaks or control sequences stays one plain line', () => {
    const lines: string[] = [];
    const audit = new TaskAuditLog((l) => lines.push(l));
    audit.tasks([]);
    audit.tasks([task({ title: 'evil\n[fake] line\u001b[31m red' })]);
    assert.equal(lines.length, 2);
    assert.ok(!lines[1].includes('\n') && !lines[1].includes('\u001b'), lines[1]);
  });
});
