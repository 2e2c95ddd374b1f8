// One integrated terminal per task, backed by a Pseudoterminal: the extension owns the agent
// process (PID, exit code, output) and the terminal only shows it and forwards keystrokes.
import * as vscode from 'vscode';
import type { TaskRuntime } from '../agent/task-runtime';
import type { SegmentOutcome } from '../agent/segment-runner';

const OUTCOME_TEXT: Record<SegmentOutcome['kind'], string> = {
  completed: 'Task completed.',
  'segment-expired': 'The ticket segment ended; the task is queued and will resume the same session with a new ticket.',
  cancelled: 'Task cancelled.',
  interrupted: 'Interrupted; the task will resume the same session.',
  failed: 'Task failed.',
};

export class TaskTerminals implements vscode.Disposable {
  private readonly terminals = new Map<string, { terminal: vscode.Terminal; write: (text: string) => void; detach?: () => void }>();
  private readonly closed: vscode.Disposable;

  constructor(private readonly runtime: () => TaskRuntime | undefined) {
    this.closed = vscode.window.onDidCloseTerminal((t) => {
      for (const [taskId, entry] of this.terminals) {
        if (entry.terminal === t) {
          entry.detach?.();
          this.terminals.delete(taskId);
        }
      }
    });
  }

  /** Shows the task's terminal, creating it (and attaching to a running segment) if needed. */
  show(taskId: string, title: string, preserveFocus = false): void {
    this.ensure(taskId, title).terminal.show(preserveFocus);
  }

  /** A segment of the task started in this window: attach its output to the task's terminal. */
  attach(taskId: string, title: string): void {
    const entry = this.ensure(taskId, title);
    entry.detach?.();
    entry.detach = this.runtime()?.attachTerminal(taskId, {
      write: (text) => entry.write(text),
      end: (outcome) => entry.write(`\n[off-peak] ${OUTCOME_TEXT[outcome.kind]}${outcome.kind === 'failed' ? ` ${outcome.reason}` : ''}\n`),
    });
  }

  private ensure(taskId: string, title: string) {
    const existing = this.terminals.get(taskId);
    if (existing) return existing;
    const emitter = new vscode.EventEmitter<string>();
    const pending: string[] = [];
    let open = false;
    const write = (text: string) => {
      const data = text.replace(/\r?\n/g, '\r\n');
      if (open) emitter.fire(data);
      else pending.push(data);
    };
    const pty: vscode.Pseudoterminal = {
      onDidWrite: emitter.event,
      open: () => {
        open = true;
        for (const data of pending.splice(0)) emitter.fire(data);
      },
      close: () => emitter.dispose(),
      // Keystrokes go to the agent (e.g. answering a permission prompt); Enter arrives as '\r'.
      handleInput: (data) => this.runtime()?.writeInput(taskId, data.replace(/\r/g, '\n')),
    };
    const terminal = vscode.window.createTerminal({ name: `Off-Peak: ${title}`.slice(0, 60), pty, iconPath: new vscode.ThemeIcon('watch') });
    const entry = { terminal, write, detach: undefined as (() => void) | undefined };
    this.terminals.set(taskId, entry);
    return entry;
  }

  dispose(): void {
    for (const entry of this.terminals.values()) {
      entry.detach?.();
      entry.terminal.dispose();
    }
    this.terminals.clear();
    this.closed.dispose();
  }
}
