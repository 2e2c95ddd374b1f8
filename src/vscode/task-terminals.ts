// One integrated terminal per task, backed by a Pseudoterminal: the extension owns the agent
// process (PID, exit code, output) and the terminal only shows it and forwards keystrokes. What it
// shows (earlier segments replayed from their logs, the running one live) is TaskTerminalFeed's.
import * as vscode from 'vscode';
import type { TaskTerminalFeed, TerminalFeedSource } from '../agent/runtime/task-terminal-feed';

interface TaskTerminal {
  terminal: vscode.Terminal;
  feed: TaskTerminalFeed;
}

export class TaskTerminals implements vscode.Disposable {
  private readonly terminals = new Map<string, TaskTerminal>();
  private readonly closed: vscode.Disposable;

  constructor(private readonly source: () => TerminalFeedSource | undefined) {
    this.closed = vscode.window.onDidCloseTerminal((t) => {
      for (const [taskId, entry] of this.terminals) {
        if (entry.terminal === t) {
          entry.feed.dispose();
          this.terminals.delete(taskId);
        }
      }
    });
  }

  /** Shows the task's terminal: its logs so far, then live output if it runs in this window. */
  show(taskId: string, title: string, preserveFocus = false): void {
    const entry = this.ensure(taskId, title);
    void entry.feed.sync();
    entry.terminal.show(preserveFocus);
  }

  /** A segment of the task started in this window: attach its output to the task's terminal. */
  attach(taskId: string, title: string): void {
    void this.ensure(taskId, title).feed.sync();
  }

  /** Closes the terminals of tasks that no longer exist (deleted here or in another window). */
  retainOnly(taskIds: ReadonlySet<string>): void {
    for (const [taskId, entry] of this.terminals) {
      if (taskIds.has(taskId)) continue;
      this.terminals.delete(taskId);
      entry.feed.dispose();
      entry.terminal.dispose();
    }
  }

  private ensure(taskId: string, title: string): TaskTerminal {
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
    // Required when a task's terminal is first made (dist/runtime.js), not at activation:
    // synchronously, as a segment that starts attaches its terminal at once.
    const { TaskTerminalFeed: Feed } = loadTerminalFeed();
    const feed = new Feed(taskId, write, this.source);
    const pty: vscode.Pseudoterminal = {
      onDidWrite: emitter.event,
      open: () => {
        open = true;
        for (const data of pending.splice(0)) emitter.fire(data);
      },
      close: () => emitter.dispose(),
      // Keystrokes go to the running agent (e.g. answering a permission prompt).
      handleInput: (data) => feed.input(data),
    };
    const terminal = vscode.window.createTerminal({
      name: `Off-Peak: ${title}`.slice(0, 60),
      pty,
      iconPath: new vscode.ThemeIcon('watch'),
    });
    const entry = { terminal, feed };
    this.terminals.set(taskId, entry);
    return entry;
  }

  dispose(): void {
    for (const entry of this.terminals.values()) {
      entry.feed.dispose();
      entry.terminal.dispose();
    }
    this.terminals.clear();
    this.closed.dispose();
  }
}

/** The task terminal's feed module, required on first use. */
function loadTerminalFeed(): typeof import('../agent/runtime/task-terminal-feed') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('../agent/runtime/task-terminal-feed') as typeof import('../agent/runtime/task-terminal-feed');
}
