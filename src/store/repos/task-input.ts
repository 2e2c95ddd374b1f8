/**
 * What callers hand to `tx.tasks` (a new task, an edit, a filter, a ticket snapshot, a terminal
 * outcome) and the checks that refuse bad input with INVALID_INPUT before any SQL runs.
 */
import { PERMISSION_MODES, type PermissionMode, type TaskStatus } from '../../core/types';
import { invalidInput } from '../errors';

export interface NewTaskInput {
  /** Defaults to a random UUID. The service passes the id it already used for the take. */
  id?: string;
  title: string;
  prompt: string;
  permissionMode: PermissionMode;
  model?: string | null;
  thoughtLevel?: string | null;
  workspacePath: string;
  workspaceIdentity?: string | null;
  /** The ticket the take returned (docs/flows.md#create: take first, INSERT only on success). */
  serverTicketId?: string | null;
  registeredAt?: number | null;
  schedulable?: boolean;
  queuePosition?: number | null;
  nextPollAt?: number | null;
  /** Take the ticket at this time, no earlier (docs/flows.md#schedules-and-chains); the task is inserted without one. */
  notBefore?: number | null;
  /** Wait for this task to complete (docs/flows.md#schedules-and-chains), its title then, and whether to run in its branch. */
  after?: { taskId: string; title: string; continueInBranch: boolean } | null;
}

export interface TaskEdit {
  title?: string;
  prompt?: string;
  permissionMode?: PermissionMode;
  model?: string | null;
  thoughtLevel?: string | null;
  /** Only while the task has taken no ticket yet (null: take it now). */
  notBefore?: number | null;
}

export function optionalTime(name: string, value: unknown): number | null {
  if (value == null || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0)) return value ?? null;
  throw invalidInput(`${name} must be a time (epoch ms)`);
}

export interface TaskFilter {
  status?: TaskStatus | readonly TaskStatus[];
  workspaceKey?: string;
  ids?: readonly string[];
  /** true: only rows with a server_ticket_id; false: only rows without. */
  hasTicket?: boolean;
  /** true: terminal rows whose settle was never acknowledged (the aggregate's outbox). */
  unsettledTerminal?: boolean;
  /** true: rows with a visible History row (started and not hidden). */
  historyVisible?: boolean;
  limit?: number;
}

export interface TicketSnapshot {
  schedulable?: boolean;
  queuePosition?: number | null;
  nextPollAt?: number | null;
}

export interface TerminalDetails {
  failureReason?: string | null;
  filesChanged?: number | null;
}

export function checkText(name: string, value: unknown, allowEmpty = false): string {
  if (typeof value !== 'string') throw invalidInput(`${name} must be a string`);
  if (!allowEmpty && value.trim() === '') throw invalidInput(`${name} must not be empty`);
  return value;
}

export function checkPermissionMode(value: unknown): PermissionMode {
  if (!PERMISSION_MODES.includes(value as PermissionMode)) {
    throw invalidInput(`permission mode must be one of ${PERMISSION_MODES.join(', ')}, got ${JSON.stringify(value)}`);
  }
  return value as PermissionMode;
}

export function optionalText(name: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return checkText(name, value, true);
}

export function bit(b: boolean): number {
  return b ? 1 : 0;
}
