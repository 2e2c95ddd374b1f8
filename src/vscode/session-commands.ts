// "Open session" and "Follow up…" (docs/flows.md#open-session, docs/flows.md#follow-up): the
// integrated terminal that continues a Claude Code session interactively, and the palette
// commands. What to open, with which argv, folder and environment, is decided vscode-free
// (src/agent/runtime/session-terminal.ts); here it only becomes a terminal.
import * as vscode from 'vscode';
import { isTerminalStatus, type OffPeakTask, type PermissionMode } from '../core/types';
import { shortTaskTitle } from '../core/task-title';
import { plainNotificationText } from '../core/untrusted-text';
import { refuseFollowUpWhileOpen } from '../service/sessions';
import type { HostEngine } from '../engine/host-engine';
import { bypassConfirmation } from '../panel/confirmations';
import { confirmModal } from './confirm';
import type { TaskTerminals } from './task-terminals';
import { guardedRegistrar } from './guarded-command';

export interface SessionCommandDeps {
  whenStarted(): Promise<HostEngine | undefined>;
  terminals: TaskTerminals;
  sessions: SessionTerminals;
  showPanel(): void;
}

/** The interactive terminals (`claude --resume`, the reference agent's conversation) this window opened, by session id. */
export class SessionTerminals implements vscode.Disposable {
  private readonly open = new Map<string, { terminal: vscode.Terminal; close?: () => void }>();
  private readonly closed = vscode.window.onDidCloseTerminal((t) => {
    for (const [session, open] of this.open) {
      if (open.terminal !== t) continue;
      open.close?.(); // the reference session's model route goes with its terminal
      this.open.delete(session);
    }
  });

  constructor(private readonly terminals: TaskTerminals) {}

  /** Opens a task's session: its agent continuing it in a terminal of its own, or the task's transcript (saying why). */
  async show(engine: HostEngine, taskId: string): Promise<'interactive' | 'transcript'> {
    const task = engine.service.getTask(taskId);
    const running = task?.sessionId ? this.open.get(task.sessionId) : undefined;
    if (running && running.terminal.exitStatus === undefined) {
      running.terminal.show();
      return 'interactive';
    }
    const view = await engine.sessions.view(taskId);
    if (view.kind === 'transcript') {
      this.terminals.show(taskId, shortTaskTitle(task, taskId));
      if (view.why) void vscode.window.showInformationMessage(view.why);
      return 'transcript';
    }
    const { name, shellPath, shellArgs, cwd, env } = view.terminal;
    // shellPath + shellArgs: VS Code runs the program with this argv; no shell parses anything.
    const terminal = vscode.window.createTerminal({
      name,
      shellPath,
      shellArgs,
      cwd,
      env,
      iconPath: new vscode.ThemeIcon('comment-discussion'),
    });
    const sessionId = task!.sessionId!;
    this.open.set(sessionId, { terminal, close: view.close });
    // Its model route closed (the engine stopped or restarted): the agent goes with it (docs/flows.md#open-session).
    void view.routeClosed?.then(() => {
      if (this.open.get(sessionId)?.terminal !== terminal || terminal.exitStatus !== undefined) return; // closed by the user
      this.open.delete(sessionId);
      terminal.dispose();
      void vscode.window.showInformationMessage(
        "The reference agent's conversation ended: its model route closed with the extension's engine (a restart). Open the session again to continue it.",
      );
    });
    terminal.show();
    return 'interactive';
  }

  /** Whether Claude Code still runs on this session in a terminal of this window (a follow-up must wait). */
  inUse(sessionId: string): boolean {
    const terminal = this.open.get(sessionId)?.terminal;
    return terminal !== undefined && terminal.exitStatus === undefined;
  }

  dispose(): void {
    this.closed.dispose();
    for (const open of this.open.values()) open.close?.();
  }
}

export function registerSessionCommands(context: vscode.ExtensionContext, deps: SessionCommandDeps): void {
  const register = guardedRegistrar(context);

  // A task id may be passed (automation, tests); otherwise a pick.
  register('offPeak.openSession', async (taskId?: unknown) => {
    const engine = await started(deps);
    const task = await taskArg(engine, taskId, (t) => t.sessionId !== null, 'Open the session of which task?');
    return task ? deps.sessions.show(engine, task.id) : undefined;
  });

  register('offPeak.followUp', async (taskId?: unknown, instructions?: unknown) => {
    const engine = await started(deps);
    const of = await taskArg(engine, taskId, (t) => isTerminalStatus(t.status) && t.sessionId !== null, 'Follow up which finished task?');
    if (!of) return undefined;
    refuseFollowUpWhileOpen(of, (sessionId) => deps.sessions.inUse(sessionId));
    const prompt =
      typeof instructions === 'string'
        ? instructions
        : await vscode.window.showInputBox({
            title: `Follow up "${plainNotificationText(shortTaskTitle(of, of.id), 60)}"`,
            prompt: "New instructions. They run as a new off-peak task that continues this task's session, in the same folder.",
            ignoreFocusOut: true,
            validateInput: (v) => (v.trim() ? undefined : 'The instructions must not be empty.'),
          });
    if (!prompt) return undefined;
    const mode: PermissionMode = of.permissionMode;
    if (typeof instructions === 'string') {
      // A caller's instructions run unattended: shown whole first (docs/security.md).
      const { confirmGivenPrompt } = await import('../panel/create-task-command');
      if (!(await confirmGivenPrompt(prompt, { kind: 'followUp', of: shortTaskTitle(of, of.id), permissionMode: mode }, confirmModal)))
        return undefined;
    }
    if (mode === 'bypassPermissions' && !(await confirmModal(bypassConfirmation(of.workspacePath)))) return undefined;
    const task = await engine.service.followUp(of.id, { prompt, permissionMode: mode });
    void vscode.window
      .showInformationMessage(
        `Queued "${plainNotificationText(task.title, 80)}", a follow-up of "${plainNotificationText(shortTaskTitle(of, of.id), 60)}".`,
        'Open Tasks',
      )
      .then((c) => c && deps.showPanel());
    return task.id;
  });
}

async function started(deps: SessionCommandDeps): Promise<HostEngine> {
  const engine = await deps.whenStarted();
  if (!engine) throw new Error('the extension has not started (see the "Off-Peak Tasks" output)');
  return engine;
}

async function taskArg(
  engine: HostEngine,
  taskId: unknown,
  filter: (t: OffPeakTask) => boolean,
  placeHolder: string,
): Promise<OffPeakTask | undefined> {
  if (typeof taskId === 'string') {
    const task = engine.service.getTask(taskId);
    if (!task) throw new Error('This task no longer exists.');
    return task;
  }
  const tasks = engine.service.listTasks().filter(filter);
  if (tasks.length === 0) {
    void vscode.window.showInformationMessage('No matching off-peak tasks.');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    tasks.map((t) => ({
      label: plainNotificationText(shortTaskTitle(t, t.id, 60), 80),
      description: t.status,
      detail: t.workspacePath,
      task: t,
    })),
    { placeHolder },
  );
  return pick?.task;
}
