/**
 * "After <task>" (docs/flows.md#schedules-and-chains): a task that waits for another is stored
 * without a ticket; the lease holder's sync takes its ticket once the task it follows completed,
 * or skips it with the reason. The rules of when are `chainGate` and `chainCycle` in
 * src/core/task-chain.ts; these are the store's side of them.
 */
import { chainCycle, chainGate, type ChainGate, type CheckOutcome } from '../core/task-chain';
import type { OffPeakTask } from '../core/types';
import type { NewTaskInput, StoreReadTx, StoreTx } from '../store';
import { ServiceError } from './errors';
import { workWhereItRan } from './shared-workplace';

/** What the create form says of the task to wait for. */
export interface AfterInput {
  afterTaskId?: string;
  /** Run in that task's worktree and branch (its changes and this task's end up on one branch). */
  continueInBranch?: boolean;
}

/** The followed task's check as the gate reads it: none, passed, failed (a skipped one did not pass), or still to come (docs/flows.md#checks). */
function checkOf(tx: StoreReadTx, taskId: string): CheckOutcome {
  const state = tx.checks.get(taskId)?.state;
  if (state === undefined) return 'none';
  if (state === 'skipped') return 'failed';
  return state === 'passed' || state === 'failed' ? state : 'pending';
}

function nameOf(task: OffPeakTask): string {
  return task.title || task.prompt.split('\n')[0]!.slice(0, 80);
}

/**
 * In the transaction that inserts task `taskId`: its link to the task it waits for, or why not
 * (no such task, a task that already failed or was cancelled, a link that would make a cycle).
 */
export function afterLinkOf(tx: StoreReadTx, taskId: string, input: AfterInput): NewTaskInput['after'] {
  if (input.afterTaskId === undefined) return null;
  const bad = (m: string) => new ServiceError('invalid_input', m);
  if (typeof input.afterTaskId !== 'string' || input.afterTaskId === '') throw bad('"After" must name a task.');
  const of = tx.tasks.get(input.afterTaskId);
  if (!of) throw new ServiceError('not_found', `Cannot wait for task ${input.afterTaskId}: there is no such task.`);
  const gate = chainGate({ title: nameOf(of), status: of.status, check: checkOf(tx, of.id) });
  if (gate.kind === 'skip')
    throw new ServiceError('not_allowed', `Cannot wait for "${nameOf(of)}": ${gate.reason.replace(/^Skipped: /, '')}`);
  const cycle = chainCycle(taskId, of.id, (id) => tx.tasks.get(id)?.afterTaskId);
  if (cycle)
    throw new ServiceError(
      'not_allowed',
      `Cannot wait for "${nameOf(of)}": the chain would come back to this task (${cycle.join(' → ')}).`,
    );
  return { taskId: of.id, title: nameOf(of), continueInBranch: input.continueInBranch === true };
}

/**
 * Whether a ticketless queued task may take its ticket as far as its chain goes: `go` for a task
 * that waits for nothing. A predecessor skipped itself passes its reason on, so every later step
 * names the step that broke the chain.
 */
export function chainGateOf(tx: StoreReadTx, task: OffPeakTask): ChainGate {
  if (!task.afterTaskId) return { kind: 'go' };
  const of = tx.tasks.get(task.afterTaskId);
  if (!of) return chainGate(null);
  if (of.status === 'cancelled' && of.afterTaskId && of.failureReason?.startsWith('Skipped: '))
    return { kind: 'skip', reason: of.failureReason };
  return chainGate({ title: task.afterTitle || nameOf(of), status: of.status, check: checkOf(tx, of.id) });
}

/**
 * In the lease holder's sync, for a waiting task whose chain said go or skip: a skip ends the task
 * as cancelled with the reason (it never took a ticket: nothing to settle); a go into the followed
 * task's branch gives it that task's worktree row, as a follow-up's. False when the task changed meanwhile.
 */
export function applyChainGate(tx: StoreTx, taskId: string): ChainGate | undefined {
  const task = tx.tasks.get(taskId);
  if (!task || task.status !== 'queued' || task.serverTicketId) return undefined;
  const gate = chainGateOf(tx, task);
  if (gate.kind === 'skip') {
    tx.tasks.cancel(taskId, { failureReason: gate.reason });
  } else if (gate.kind === 'go' && task.afterTaskId && task.continueInBranch) {
    const of = tx.isolation.get(task.afterTaskId);
    if (of?.broughtHome?.kind === 'discarded') {
      const skip = { kind: 'skip' as const, reason: `Skipped: the branch of ${task.afterTitle || task.afterTaskId} was discarded.` };
      tx.tasks.cancel(taskId, { failureReason: skip.reason });
      return skip;
    }
    workWhereItRan(tx, taskId, task.afterTaskId);
  }
  return gate;
}
