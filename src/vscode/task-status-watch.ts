// What this window keeps current whenever a task, a result, the ledger or a question changes in any
// window: the status bar (src/panel/host-status.ts words it), the Output log of task changes, the
// question notifications and task terminals still wanted, the panel's unseen count, and one
// notification per usage-limit reset (docs/flows.md#usage-limits).
import * as vscode from 'vscode';
import type { HostEngine } from '../engine/host-engine';
import type { TaskAuditLog } from '../engine/task-audit';
import { hostStatusOf, storeStatusTasks } from '../panel/host-status';
import type { Notifier } from './notifier';
import type { TaskStatusBar } from './status-bar';
import type { TaskTerminals } from './task-terminals';

/** The usage-limit reset last notified: kept by the extension, so an engine restart does not notify it again. */
export interface UsageLimitNotice {
  resetAt: number | undefined;
}

export interface TaskStatusWatchParts {
  statusBar: TaskStatusBar;
  audit: TaskAuditLog;
  notifier: Notifier;
  terminals: TaskTerminals;
  usageLimit: UsageLimitNotice;
  /** The reserve of the account's windows (personal mode's setting), else null. */
  reserve(): number | null;
  /** After each refresh: how many results no panel has shown yet. */
  onChange(unseen: number): void;
}

/** Refreshes at once and after every change that concerns it; disposing stops it. */
export function watchTaskStatus(engine: HostEngine, parts: TaskStatusWatchParts): vscode.Disposable {
  const refresh = () => {
    const tasks = engine.service.listTasks();
    const { unseen, lastSeenAt, summarized } = engine.store.read((tx) => ({
      unseen: tx.outcomes.unseen(),
      lastSeenAt: tx.outcomes.lastSeenAt(),
      summarized: storeStatusTasks(tx, tasks),
    }));
    parts.audit.tasks(tasks);
    const asks = engine.questions.pendingAsks();
    const ticketsOf = (id: string) => engine.service.ticketsOf(id);
    const status = hostStatusOf({
      tasks,
      summarized,
      ticketsOf,
      asks,
      unseen,
      lastSeenAt,
      reserve: parts.reserve(),
      now: Date.now(),
    });
    parts.statusBar.update(status.view);
    // Once per reset, from one window (the lease holder): when held tasks resume.
    const limitAt = status.usageLimitAt;
    if (limitAt !== null && limitAt !== parts.usageLimit.resetAt && engine.service.isLeader) {
      parts.usageLimit.resetAt = limitAt;
      const at = new Date(limitAt).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
      void vscode.window.showInformationMessage(`Off-Peak Tasks: the account's usage limit is reached; held tasks resume at ${at}.`);
    }
    // A question answered anywhere (a parked one included) closes its notification here too.
    parts.notifier.questionsStillOpen(new Set(asks.map((a) => a.id)));
    // A deleted task (here or in another window) takes its terminal along.
    parts.terminals.retainOnly(new Set(tasks.map((t) => t.id)));
    parts.onChange(unseen.length);
  };
  const sub = engine.store.onDidChange((change) => {
    // not a renewal, a window, a backoff; a result shown in another window's panel counts
    // (and a ledger change: the account's usage limit and windows)
    if (change.topics.has('tasks') || change.topics.has('outcomes') || change.topics.has('tickets')) refresh();
  });
  // A question asked or answered in any window: "N need input" comes and goes with it.
  const asksSub = engine.questions.onAsksChange(refresh);
  refresh();
  return { dispose: () => (sub.dispose(), asksSub.dispose()) };
}
