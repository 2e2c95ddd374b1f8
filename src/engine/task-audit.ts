// The "Off-Peak Tasks" Output channel's account of each task's life, so a night can be audited in
// the morning: queued, ticket taken, admitted, segment started and ended, question asked and
// answered, paused, ended, deleted. It learns task states by comparing task lists (the store
// tells every window), and the runtime's events of this window. Task titles and tool names are
// untrusted text: one line each, control characters removed; no ticket id or key is written.
import { clockTime } from '../core/clock';
import type { OffPeakTask } from '../core/types';
import { shortTaskTitle } from '../core/task-title';
import { plainNotificationText } from '../core/untrusted-text';
import type { RuntimeEvent } from '../agent/runtime/task-runtime';

interface Known {
  status: OffPeakTask['status'];
  ticket: string | null;
  title: string;
}

const SEGMENT_END: Record<string, string> = {
  completed: 'the agent finished',
  'segment-expired': 'the off-peak segment ended (time limit); the task resumes with a new ticket',
  cancelled: 'cancelled',
  interrupted: 'interrupted; the same session resumes later',
  failed: 'the agent failed',
  'usage-limited': 'your usage limit resets later than a hold is worth; the task waits for the reset and resumes its session then',
};

const ANSWERED_BY: Record<string, string> = {
  host: 'in VS Code',
  terminal: 'in the terminal',
  timeout: 'automatically (nobody answered in time)',
  ended: 'automatically (the segment ended)',
};

export class TaskAuditLog {
  private known: Map<string, Known> | undefined;

  constructor(private readonly log: (line: string) => void) {}

  /** The tasks as they are now; logs what changed since the last call (nothing for the first). */
  tasks(tasks: readonly OffPeakTask[]): void {
    const before = this.known;
    const now = new Map<string, Known>();
    for (const t of tasks) {
      const known: Known = { status: t.status, ticket: t.serverTicketId, title: label(t) };
      now.set(t.id, known);
      if (!before) continue;
      const old = before.get(t.id);
      if (!old) {
        this.line(known.title, `queued (${t.permissionMode})${t.serverTicketId ? ', ticket taken' : ''}`);
        continue;
      }
      if (old.ticket !== t.serverTicketId && t.serverTicketId !== null) this.line(known.title, 'new ticket taken');
      if (old.status !== t.status) this.line(known.title, statusText(t));
    }
    if (before) {
      for (const [id, old] of before) if (!now.has(id)) this.line(old.title, 'deleted');
    } else {
      this.log(`tasks: ${tasks.length} known`);
    }
    this.known = now;
  }

  /** What the runtime of this window reports about a task's segment. */
  runtimeEvent(event: RuntimeEvent, task: { title: string; prompt: string } | undefined): void {
    const title = label(task, event.taskId);
    switch (event.type) {
      case 'segment-started':
        return this.line(title, event.resume ? 'segment started, resuming its session' : 'segment started, new session');
      case 'admitted':
        return this.line(title, 'admitted: the gateway accepted its first model request of this segment');
      case 'input-needed':
        return this.line(title, `asks: ${plainNotificationText(event.ask.tool, 60)}: ${plainNotificationText(event.ask.summary, 120)}`);
      case 'input-answered':
        return this.line(
          title,
          `question answered: ${event.decision === 'allow' ? 'allowed' : 'denied'} ${ANSWERED_BY[event.by] ?? event.by}`,
        );
      case 'usage-limit':
        return this.line(
          title,
          event.resetAt === null
            ? 'usage limit lifted: its requests go on'
            : `usage limit reached: its requests wait for the reset at ${clockTime(event.resetAt)}${event.park ? '; the task parks until then' : ''}`,
        );
      case 'segment-ended':
        return this.line(title, `segment ended: ${SEGMENT_END[event.outcome.kind] ?? event.outcome.kind}`);
      default:
        return undefined;
    }
  }

  private line(title: string, what: string): void {
    this.log(`task "${title}": ${what}`);
  }
}

function label(task: { title: string; prompt: string } | undefined, id = ''): string {
  return plainNotificationText(shortTaskTitle(task, id.slice(0, 8)), 60);
}

function statusText(t: OffPeakTask): string {
  switch (t.status) {
    case 'queued':
      return t.startedAt !== null ? 'back in the queue for its next segment' : 'queued';
    case 'running':
    case 'awaiting':
      return 'running';
    case 'paused':
      return 'paused';
    case 'needs_input':
      return 'parked: waits for an answer to its question, without holding capacity';
    case 'completed':
      return `completed${t.filesChanged != null ? ` (${t.filesChanged} file${t.filesChanged === 1 ? '' : 's'} changed)` : ''}`;
    case 'failed':
      return `failed: ${plainNotificationText(t.failureReason ?? 'no reason given', 200)}`;
    case 'cancelled':
      return 'cancelled';
  }
}
