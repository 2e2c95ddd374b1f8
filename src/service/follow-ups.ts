/**
 * "Follow up…" on a finished task (docs/flows.md#follow-up): new instructions that run as a new
 * off-peak task of their own (ticket, card, History row) whose first segment resumes the
 * finished task's agent session, in the same folder, with the same agent. These are the rules;
 * TaskActions.create takes the ticket and writes the task and its link in one transaction.
 */
import { PERMISSION_MODES, isTerminalStatus, type PermissionMode } from '../core/types';
import type { FollowUpLink, StoreReadTx, StoreTx } from '../store';
import { ServiceError } from './errors';
import { workWhereItRan } from './shared-workplace';
import type { CreateTaskInput } from './ticket-rules';

export interface FollowUpInput {
  /** The new instructions (the follow-up's prompt). */
  prompt: string;
  /** Default: "Follow-up: <the first line of the instructions>". */
  title?: string;
  /** Default: the finished task's. */
  permissionMode?: PermissionMode;
}

export type FollowUpLinkInput = Omit<FollowUpLink, 'taskId' | 'createdAt'>;

/** The new task's form and its link, or why the finished task cannot be followed up (nothing spent). */
export function planFollowUp(tx: StoreReadTx, ofTaskId: string, input: FollowUpInput): { form: CreateTaskInput; link: FollowUpLinkInput } {
  const bad = (m: string) => new ServiceError('invalid_input', m);
  if (!input || typeof input.prompt !== 'string' || input.prompt.trim() === '') throw bad('The follow-up instructions must not be empty.');
  if (input.title !== undefined && typeof input.title !== 'string') throw bad('The title must be a string.');
  if (input.permissionMode !== undefined && !PERMISSION_MODES.includes(input.permissionMode))
    throw bad(`The permission mode must be one of ${PERMISSION_MODES.join(', ')}.`);
  const of = tx.tasks.get(ofTaskId);
  if (!of) throw new ServiceError('not_found', `No task ${ofTaskId}.`);
  const name = of.title || of.prompt.split('\n')[0].slice(0, 80);
  if (!isTerminalStatus(of.status))
    throw new ServiceError('not_allowed', `Cannot follow up "${name}" yet: it is ${of.status}; a follow-up continues a finished task.`);
  if (!of.sessionId)
    throw new ServiceError('not_allowed', `Cannot follow up "${name}": it never started, so it has no session to continue.`);
  const agent = tx.runtime.get(of.id)?.agent;
  if (!agent) throw new ServiceError('not_allowed', `Cannot follow up "${name}": which agent ran its session is not recorded.`);
  checkSessionFree(tx, of.sessionId);
  const title = input.title?.trim() || `Follow-up: ${input.prompt.trim().split('\n')[0]}`.slice(0, 200);
  return {
    form: {
      title,
      prompt: input.prompt,
      permissionMode: input.permissionMode ?? of.permissionMode,
      model: of.model,
      thoughtLevel: of.thoughtLevel,
      workspacePath: of.workspacePath,
      workspaceIdentity: of.workspaceIdentity,
    },
    link: { followUpOf: of.id, ofTitle: name, sessionId: of.sessionId, agent },
  };
}

/**
 * Two agents never work on one session: refused while another follow-up of the same session is
 * queued or running (checked again in the insert's transaction, since another window may race).
 */
export function checkSessionFree(tx: Pick<StoreReadTx, 'followUps' | 'tasks'>, sessionId: string, exceptTaskId?: string): void {
  const users = tx.followUps.liveUsersOfSession(sessionId, exceptTaskId);
  if (users.length === 0) return;
  const other = tx.tasks.get(users[0]);
  throw new ServiceError(
    'not_allowed',
    `Cannot follow up now: "${other?.title || users[0]}" already continues this session and has not finished; follow up that one once it has.`,
  );
}

/** In the transaction that inserts the follow-up task: its link, after the session was checked again. */
export function linkFollowUp(tx: StoreTx, taskId: string, link: FollowUpLinkInput): void {
  checkSessionFree(tx, link.sessionId, taskId);
  tx.followUps.insert({ ...link, taskId });
}

/**
 * In the transaction that inserts a task: where it will work (docs/flows.md#isolation). A
 * follow-up runs where the task it continues ran (the same worktree, branch and base); any other
 * task as its form asked (no row: in place, as before isolation existed).
 */
export function isolateTask(tx: StoreTx, taskId: string, form: CreateTaskInput, followUp?: FollowUpLinkInput): void {
  if (followUp && workWhereItRan(tx, taskId, followUp.followUpOf)) return;
  if (!followUp && form.isolation) {
    tx.isolation.insert({ taskId, mode: form.isolation, repoPath: form.workspacePath });
  }
}
