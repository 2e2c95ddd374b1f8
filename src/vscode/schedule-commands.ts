// The palette's schedule commands (docs/flows.md#schedules-and-chains): New Schedule…, Pause or
// Resume Schedule…, Edit Schedule… (future runs only) and Delete Schedule…, each with quick picks.
import * as vscode from 'vscode';
import { formatMinuteOfDay, machineTimeZone } from '../core/zoned-time';
import { plainNotificationText } from '../core/untrusted-text';
import type { PermissionMode } from '../core/types';
import type { HostEngine } from '../engine/host-engine';
import type { ScheduleRecord } from '../store';
import { bypassConfirmation } from '../panel/confirmations';
import { deleteScheduleConfirmation } from '../panel/schedule-panel';
import { parseTimeOfDay, repeatChoices, ruleAt, schedulePickItem } from '../panel/schedule-command';
import { confirmModal } from './confirm';
import { readSettings } from './settings';
import { openWorkspaces } from './workspaces';

type PermissionPick = vscode.QuickPickItem & { mode: PermissionMode };

export interface ScheduleCommandDeps {
  whenStarted(): Promise<HostEngine | undefined>;
  permissionPicks: readonly PermissionPick[];
  /** Registers one command with the extension's error handling. */
  register(id: string, fn: (...args: unknown[]) => unknown): void;
  showPanel(): void;
}

async function engineOf(deps: ScheduleCommandDeps): Promise<HostEngine> {
  const engine = await deps.whenStarted();
  if (!engine) throw new Error('the extension has not started (see the "Off-Peak Tasks" output)');
  return engine;
}

const timeProblem = (text: string) => {
  const parsed = parseTimeOfDay(text);
  return typeof parsed === 'number' ? undefined : parsed.problem;
};

async function askTime(title: string, value: string): Promise<number | undefined> {
  const text = await vscode.window.showInputBox({
    title,
    prompt: `At what time (HH:MM, this machine's time zone, ${machineTimeZone()})?`,
    value,
    ignoreFocusOut: true,
    validateInput: timeProblem,
  });
  const parsed = text === undefined ? undefined : parseTimeOfDay(text);
  return typeof parsed === 'number' ? parsed : undefined;
}

async function pickSchedule(engine: HostEngine, placeHolder: string): Promise<ScheduleRecord | undefined> {
  const schedules = engine.service.schedules.list();
  if (schedules.length === 0) {
    void vscode.window.showInformationMessage('No off-peak schedules.');
    return undefined;
  }
  const now = Date.now();
  const zone = machineTimeZone();
  const pick = await vscode.window.showQuickPick(
    schedules.map((s) => ({ ...schedulePickItem(s, now, zone), schedule: s })),
    { placeHolder },
  );
  return pick?.schedule;
}

/** "New Schedule…": the prompt, how often, the time, the folder and what the agent may do. */
async function newSchedule(deps: ScheduleCommandDeps): Promise<string | undefined> {
  const engine = await engineOf(deps);
  const workspaces = openWorkspaces();
  if (workspaces.length === 0) throw new Error('open a folder first: a scheduled task runs in a workspace folder');
  const title = 'New Off-Peak Schedule';
  const prompt = await vscode.window.showInputBox({
    title: `${title} (1/4)`,
    prompt: 'What should the agent do each time?',
    placeHolder: 'e.g. Update the dependencies and fix what breaks',
    ignoreFocusOut: true,
    validateInput: (t) => (t.trim() ? undefined : 'The prompt is empty'),
  });
  if (!prompt) return undefined;
  const repeat = await vscode.window.showQuickPick(repeatChoices(Date.now(), machineTimeZone()), {
    title: `${title} (2/4)`,
    placeHolder: 'How often?',
    ignoreFocusOut: true,
  });
  if (!repeat) return undefined;
  const at = await askTime(`${title} (3/4)`, '02:00');
  if (at === undefined) return undefined;
  const permission = await vscode.window.showQuickPick(deps.permissionPicks, {
    title: `${title} (4/4)`,
    placeHolder: 'What may the agent do without asking?',
    ignoreFocusOut: true,
  });
  if (!permission) return undefined;
  const workspace =
    workspaces.length === 1
      ? workspaces[0]
      : (
          await vscode.window.showQuickPick(
            workspaces.map((w) => ({ label: w.name, description: w.path, w })),
            { placeHolder: 'Run it in which folder?' },
          )
        )?.w;
  if (!workspace) return undefined;
  if (permission.mode === 'bypassPermissions' && !(await confirmModal(bypassConfirmation(workspace.path)))) return undefined;
  const { isolationFor, looksLikeGitFolder } = await import('../panel/workplace-panel');
  const schedule = await engine.service.schedules.create(
    {
      title: prompt.split('\n')[0]!.slice(0, 80),
      prompt,
      workspacePath: workspace.path,
      workspaceIdentity: workspace.identity ?? null,
      permissionMode: permission.mode,
      model: null,
      thoughtLevel: null,
      isolation: isolationFor(undefined, workspace.path, readSettings().isolation, looksLikeGitFolder),
      checkCommand: null,
    },
    repeat.rule(at),
  );
  void vscode.window
    .showInformationMessage(`Off-Peak Tasks: schedule "${plainNotificationText(schedule.title, 60)}" saved.`, 'Open Tasks')
    .then((c) => c && deps.showPanel());
  return schedule.id;
}

export function registerScheduleCommands(deps: ScheduleCommandDeps): void {
  deps.register('offPeak.newSchedule', () => newSchedule(deps));
  deps.register('offPeak.pauseSchedule', async () => {
    const engine = await engineOf(deps);
    const s = await pickSchedule(engine, 'Pause or resume which schedule?');
    if (s) await engine.service.schedules.setPaused(s.id, !s.paused);
  });
  // Future runs only: a run already queued keeps its task.
  deps.register('offPeak.editSchedule', async () => {
    const engine = await engineOf(deps);
    const s = await pickSchedule(engine, 'Edit which schedule? (future runs only)');
    if (!s) return;
    const prompt = await vscode.window.showInputBox({
      title: `Edit "${plainNotificationText(s.title, 60)}" (1/2)`,
      value: s.prompt,
      ignoreFocusOut: true,
      validateInput: (t) => (t.trim() ? undefined : 'The prompt is empty'),
    });
    if (!prompt) return;
    const at = await askTime(`Edit "${plainNotificationText(s.title, 60)}" (2/2)`, formatMinuteOfDay(s.rule.at));
    if (at === undefined) return;
    await engine.service.schedules.edit(s.id, { ...s, prompt }, ruleAt(s.rule, at));
  });
  deps.register('offPeak.deleteSchedule', async () => {
    const engine = await engineOf(deps);
    const s = await pickSchedule(engine, 'Delete which schedule?');
    if (s && (await confirmModal(deleteScheduleConfirmation(s)))) await engine.service.schedules.delete(s.id);
  });
}
