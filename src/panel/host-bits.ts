// What the panel's backend is given by its host: the few things only VS Code knows (the secret
// key, open folders, terminals, modal dialogs) and the permission questions of every window.
import type { AnswerResult, AskDecision, PendingAsk } from '../core/ask-types';
import type { DisposableLike } from '../core/disposable';
import type { OffPeakTask } from '../core/types';
import type { SetupView } from '../protocol/webview';
import type { IsolationMode } from '../store';
import type { Confirmation } from './confirmations';

/** The part of the gateway's client configs the panel shows (exposure and plan). */
export interface PanelClientConfigs {
  exposed: boolean;
  planEligible: boolean;
  upgradeHint: string | null;
  upgradeUrl: string | null;
}

/** The permission questions agents wait on (the HostEngine is one: every window's). */
export interface PanelAskSource {
  pendingAsks(): PendingAsk[];
  /** `inputDigest`: sha256 of the input the card showed (docs/flows.md#what-a-question-shows). */
  answerAsk(taskId: string, askId: string, decision: AskDecision, inputDigest: string): AnswerResult | Promise<AnswerResult>;
  /** Fires when a question is asked or answered. */
  onAsksChange(listener: () => void): DisposableLike;
}

export interface PanelHostBits {
  hasApiKey(): Promise<boolean>;
  /** Asks for the key (a password box); resolves false when none was saved (the box was dismissed). */
  setApiKey(): Promise<unknown>;
  /** Open folders; `identity` routes a task to the window that has it open (remote windows). */
  workspaces(): { name: string; path: string; identity: string | null }[];
  models(): string[];
  /** The gateway's client configs as last loaded; undefined while unknown. */
  configs(): PanelClientConfigs | undefined;
  /** Loads the client configs again (the panel opened, or a take was refused). */
  reloadConfigs(): Promise<unknown>;
  openTerminal(taskId: string): Promise<unknown>;
  /**
   * The Session entry (docs/flows.md#open-session): what it opened. Absent: the task's terminal
   * (the transcript), as openTerminal.
   */
  openSession?(taskId: string): Promise<'interactive' | 'transcript'>;
  /** Whether the user's own Claude Code runs on this session in a terminal of this window (a follow-up must wait). */
  sessionInUseHere?(sessionId: string): boolean;
  /** Shows a modal question; true when the user chose `action`. */
  confirm(question: Confirmation): Promise<boolean>;
  /** Shows a modal question with its `alternative` as a second button: which one the user chose (absent: `confirm`, no alternative). */
  confirmWithAlternative?(question: Confirmation & { alternative: string }): Promise<'action' | 'alternative' | undefined>;
  /** The reference agent's transcript of a task that deleting its session would remove (absent: none). */
  sessionTranscript?(task: OffPeakTask): string | undefined;
  /** "Review changes" (docs/flows.md#review): the task's changes, or one file's, in the diff editor. */
  reviewChanges?(taskId: string, path?: string): Promise<unknown>;
  /** "Open worktree in new window". */
  openFolderInNewWindow?(folder: string): Promise<unknown>;
  /** A merge stopped on conflicts: the merge editor on the first conflicted file (absent: nothing opens). */
  openMergeEditor?(folder: string, files: string[]): Promise<unknown>;
  /** The machine setting `offPeak.isolation` (absent: in place, as before isolation existed). */
  isolation?(): IsolationMode;
  notice(): string | undefined;
  /** The reserve the local gateway keeps (`offPeak.personal.stopAtUtilization`, 0..1; null or absent: none). */
  reserve?(): number | null;
  /** Opens the first-run walkthrough (absent: the request does nothing). */
  openWalkthrough?(): PromiseLike<unknown>;
  /** The mode, agent, credential, model API and hours line (`setupView`; absent: not shown). */
  setup?(): Promise<SetupView | undefined>;
}

/** The button the user chose: the question's second one only where the host can show it. */
export async function confirmChoice(host: PanelHostBits, question: Confirmation): Promise<'action' | 'alternative' | undefined> {
  if (question.alternative !== undefined && host.confirmWithAlternative)
    return host.confirmWithAlternative({ ...question, alternative: question.alternative });
  return (await host.confirm(question)) ? 'action' : undefined;
}
