// The contributed commands (ids must match package.json `contributes.commands`).
import * as vscode from 'vscode';
import { setApiKeyFromArgument } from '../panel/api-key-command';
import { bypassConfirmation, cancelConfirmation } from '../panel/confirmations';
import { queuedNoticeText, taskStateWord } from '../panel/task-summary';
import { CHECK_COMMAND_HINT } from '../protocol/check-hint';
import { confirmModal, confirmModalWithAlternative } from './confirm';
import { isTerminalStatus, workspaceKeyOf, type PermissionMode } from '../core/types';
import { shortTaskTitle } from '../core/task-title';
import { readSettings } from './settings';
import { plainNotificationText } from '../core/untrusted-text';
import type { HostEngine } from '../engine/host-engine';
import type { ApiKeyStore } from './api-key';
import type { TasksPanel } from './panel';
import type { TaskTerminals } from './task-terminals';
import { openWorkspaces } from './workspaces';
import { registerScheduleCommands } from './schedule-commands';
import { guardedRegistrar } from './guarded-command';

export interface CommandDeps {
  panel: TasksPanel;
  apiKey: ApiKeyStore;
  engine(): HostEngine | undefined;
  whenStarted(): Promise<HostEngine | undefined>;
  terminals: TaskTerminals;
  models(): string[];
  /** Personal mode: the local authority's key is the gateway key, there is none to ask for. */
  personal?(): boolean;
}

const PERMISSION_PICKS: (vscode.QuickPickItem & { mode: PermissionMode })[] = [
  {
    label: 'Ask before edits and commands',
    description: 'default',
    // The palette's create step says what an unanswered question does under the settings now (permissionPicks).
    detail: 'Unanswered questions follow the "Unanswered Question" setting (by default the task parks without holding capacity).',
    mode: 'default',
  },
  { label: 'Accept edits', description: 'acceptEdits', detail: 'Edits files without asking; asks before commands.', mode: 'acceptEdits' },
  { label: 'Plan only', description: 'plan', detail: 'Read-only: the agent only reads and proposes.', mode: 'plan' },
  {
    label: 'Bypass permissions',
    description: 'bypassPermissions',
    detail: 'Never asks. Only for workspaces you can restore.',
    mode: 'bypassPermissions',
  },
];

/** The permission step's choices; "default" says what an unanswered question does under the settings now. */
function permissionPicks(detailOf: (policy: 'park' | 'deny', minutes: number) => string): typeof PERMISSION_PICKS {
  const s = readSettings();
  const detail = detailOf(s.unansweredQuestion, s.unansweredQuestion === 'park' ? s.askParkMinutes : s.askTimeoutMinutes);
  return PERMISSION_PICKS.map((p) => (p.mode === 'default' ? { ...p, detail } : p));
}

export function registerCommands(context: vscode.ExtensionContext, deps: CommandDeps): void {
  const register = guardedRegistrar(context);

  // The walkthrough's "Queue a task" passes { focusForm: true }: the panel's form, not the palette.
  register(
    'offPeak.openPanel',
    (options?: unknown) => void deps.panel.show({ focusForm: (options as { focusForm?: unknown } | undefined)?.focusForm === true }),
  );
  register('offPeak.createTask', (input?: unknown) => queueTask(deps, input));
  // A key may be passed as the argument (automation); replacing a stored key that way asks first.
  // Otherwise a password box asks for it, and the key saved is checked with the gateway.
  register('offPeak.setApiKey', async (key?: unknown) => {
    if (typeof key === 'string') return setApiKeyFromArgument(deps.apiKey, key, confirmModal);
    if (!(await deps.apiKey.prompt())) return false;
    await checkApiKey(deps);
    return true;
  });
  register('offPeak.clearApiKey', async () => {
    await deps.apiKey.clear();
    void vscode.window.showInformationMessage('Off-Peak gateway API key removed.');
  });
  register('offPeak.showTaskTerminal', async () => {
    const task = await pickTask(deps, (t) => t.startedAt !== null, 'Show the terminal of which task?');
    if (task) deps.terminals.show(task.id, shortTaskTitle(task, task.id));
  });
  register('offPeak.cancelTask', async () => {
    const engine = deps.engine();
    const task = await pickTask(deps, (t) => !isTerminalStatus(t.status), 'Cancel which task?');
    // The panel's question, as a modal: cancelling cannot be undone.
    if (task && engine && (await confirmModal(cancelConfirmation(task)))) await engine.service.cancel(task.id);
  });
  registerScheduleCommands({
    whenStarted: () => deps.whenStarted(),
    permissionPicks: PERMISSION_PICKS,
    register,
    showPanel: () => void deps.panel.show(),
  });
}

/** A key was just saved: says whether the gateway accepted it (a refusal offers to set it again). */
async function checkApiKey(deps: CommandDeps): Promise<void> {
  const engine = deps.engine();
  if (!engine) return;
  const { apiKeyCheck } = await import('../panel/service-views');
  const check = apiKeyCheck(await engine.service.availability.recheck());
  if (check.accepted === false) {
    const again = await vscode.window.showWarningMessage(`Off-Peak Tasks: ${check.text}`, 'Set API key…');
    if (again) await vscode.commands.executeCommand('offPeak.setApiKey');
  } else {
    void vscode.window.showInformationMessage(`Off-Peak Tasks: ${check.text}`);
  }
}

async function pickTask(
  deps: CommandDeps,
  filter: (t: ReturnType<HostEngine['service']['listTasks']>[number]) => boolean,
  placeHolder: string,
) {
  const engine = await deps.whenStarted();
  if (!engine) throw new Error('the extension has not started (see the "Off-Peak Tasks" output)');
  const asking = new Set(engine.questions.pendingAsks().map((a) => a.taskId));
  // Tasks waiting for an answer first: they are what the user most likely came for.
  const tasks = engine.service
    .listTasks()
    .filter(filter)
    .sort((a, b) => Number(asking.has(b.id)) - Number(asking.has(a.id)));
  if (tasks.length === 0) {
    void vscode.window.showInformationMessage('No matching off-peak tasks.');
    return undefined;
  }
  // A task whose agent waits for an answer says "needs input", as the status bar and the panel do.
  const pick = await vscode.window.showQuickPick(
    tasks.map((t) => ({
      label: t.title || t.prompt.slice(0, 60),
      description: taskStateWord(t, asking),
      detail: t.workspacePath,
      task: t,
    })),
    { placeHolder },
  );
  return pick?.task;
}

/** The uncommitted-changes notice before a task on its own branch: go ahead, run in place instead, or undefined (commit first). */
async function uncommittedChoice(folder: string): Promise<'action' | 'alternative' | undefined> {
  const { uncommittedFiles } = await import('../agent/workplace/folder-status');
  const { uncommittedConfirmation } = await import('../panel/uncommitted-notice');
  const notice = uncommittedConfirmation(await uncommittedFiles(folder));
  return notice ? confirmModalWithAlternative(notice) : 'action';
}

/** "Queue Off-Peak Task…": a short multi-step input from the command palette. */
async function queueTask(deps: CommandDeps, raw: unknown): Promise<string | undefined> {
  // Loaded on first use: the argument schemas bring zod, which activation need not load.
  const { checkWorkspaceFolder, confirmGivenPrompt, parseCreateTaskArgs, permissionPickDetail, promptProblem } =
    await import('../panel/create-task-command');
  // Arguments a caller (a keybinding, another extension, a test) may pass to skip the prompts.
  const args = parseCreateTaskArgs(raw);
  if (args.prompt !== undefined) {
    const problem = promptProblem(args.prompt);
    if (problem) throw new Error(problem);
  }
  const engine = await deps.whenStarted();
  if (!engine) throw new Error('the extension has not started (see the "Off-Peak Tasks" output)');
  if (!deps.personal?.() && !(await deps.apiKey.has())) {
    const choice = await vscode.window.showWarningMessage('Set your Off-Peak gateway API key first.', 'Set API Key…');
    if (choice !== 'Set API Key…' || !(await deps.apiKey.prompt())) return undefined;
  }
  const workspaces = openWorkspaces();
  let workspacePath = args.workspacePath;
  if (!workspacePath) {
    if (workspaces.length === 0) throw new Error('open a folder first: a task runs in a workspace folder');
    workspacePath =
      workspaces.length === 1
        ? workspaces[0].path
        : (
            await vscode.window.showQuickPick(
              workspaces.map((w) => ({ label: w.name, description: w.path, path: w.path })),
              { placeHolder: 'Run the task in which folder?' },
            )
          )?.path;
    if (!workspacePath) return undefined;
  }
  workspacePath = checkWorkspaceFolder(
    workspacePath,
    workspaces.map((w) => w.path),
  );
  // "Run on its own branch" is asked only interactively, on a folder committed in its repository
  // (docs/flows.md#isolation); elsewhere a worktree task runs in place, its card saying why.
  const { isolationFor, looksLikeGitFolder } = await import('../panel/workplace-panel');
  const { worktreeFit } = await import('../agent/workplace/task-worktree');
  const askBranch = args.ownBranch === undefined && args.prompt === undefined && (await worktreeFit(workspacePath)).kind === 'fits';
  // The check command runs unattended (docs/flows.md#checks): a caller's is only a prefill the user confirms.
  const askCheck = args.prompt === undefined || args.checkCommand !== undefined;
  const steps = 2 + (askCheck ? 1 : 0) + (askBranch ? 1 : 0);
  const prompt =
    args.prompt ??
    (await vscode.window.showInputBox({
      title: `Queue Off-Peak Task (1/${steps})`,
      prompt: 'What should the agent do? It runs when off-peak capacity admits it.',
      placeHolder: 'e.g. Upgrade the test suite to mocha 12 and fix what breaks',
      ignoreFocusOut: true,
      validateInput: promptProblem,
    }));
  if (!prompt) return undefined;
  const permissionMode =
    args.permissionMode ??
    (
      await vscode.window.showQuickPick(permissionPicks(permissionPickDetail), {
        title: `Queue Off-Peak Task (2/${steps})`,
        placeHolder: 'What may the agent do without asking?',
        ignoreFocusOut: true,
      })
    )?.mode;
  if (!permissionMode) return undefined;
  // A caller's prompt runs unattended: shown whole first, like a caller's check command (docs/security.md).
  if (args.prompt !== undefined && !(await confirmGivenPrompt(prompt, { kind: 'create', workspacePath, permissionMode }, confirmModal)))
    return undefined;
  if (permissionMode === 'bypassPermissions' && !(await confirmModal(bypassConfirmation(workspacePath)))) return undefined;
  const workspace = workspaces.find((w) => w.path === workspacePath);
  const checkCommand = askCheck
    ? await vscode.window.showInputBox({
        title: `Queue Off-Peak Task (3/${steps})`,
        prompt: CHECK_COMMAND_HINT,
        placeHolder: 'e.g. npm test (leave empty for none)',
        value:
          args.checkCommand ??
          engine.store.read((tx) => tx.checks.lastCommandFor(workspaceKeyOf(workspacePath, workspace?.identity))) ??
          '',
        ignoreFocusOut: true,
      })
    : undefined;
  if (askCheck && checkCommand === undefined) return undefined;
  let ownBranch = args.ownBranch;
  if (askBranch) {
    const branchFirst = readSettings().isolation === 'worktree';
    const picks = [
      {
        label: 'Run on its own branch',
        detail:
          'In its own worktree on a new offpeak/… branch: your working copy and other tasks are not touched. Review, then merge or discard.',
        own: true,
      },
      { label: 'Run in the folder itself', detail: 'Edits your working copy; waits while another task runs in this folder.', own: false },
    ];
    const pick = await vscode.window.showQuickPick(branchFirst ? picks : picks.reverse(), {
      title: `Queue Off-Peak Task (${steps}/${steps})`,
      placeHolder: 'Where should the agent work?',
      ignoreFocusOut: true,
    });
    if (!pick) return undefined;
    ownBranch = pick.own;
  }
  let isolation = isolationFor(ownBranch, workspacePath, readSettings().isolation, looksLikeGitFolder);
  // Interactively, a new branch says first that it starts from the last commit (docs/flows.md#isolation).
  if (isolation === 'worktree' && args.prompt === undefined && !(args.afterTaskId && args.continueInBranch)) {
    const choice = await uncommittedChoice(workspacePath);
    if (choice === undefined) return undefined;
    if (choice === 'alternative') isolation = 'inPlace';
  }
  const task = await engine.service.create({
    title: args.title ?? prompt.split('\n')[0].slice(0, 80),
    prompt,
    permissionMode,
    model: args.model ?? null,
    thoughtLevel: null,
    workspacePath,
    workspaceIdentity: workspace?.identity ?? null,
    isolation,
    checkCommand,
    // docs/flows.md#schedules-and-chains: given by a command link or keybinding, never asked for
    notBefore: args.notBefore,
    afterTaskId: args.afterTaskId,
    continueInBranch: args.continueInBranch,
  });
  void vscode.window
    .showInformationMessage(queuedNoticeText(plainNotificationText(task.title, 80)), 'Open Tasks')
    .then((c) => c && deps.panel.show());
  return task.id;
}
