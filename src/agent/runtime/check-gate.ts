/**
 * Before a check runs (docs/flows.md#checks): the check runs outside the task's permission mode,
 * so in a mode that asks before commands (Ask, Accept edits) a check whose files the agent changed
 * since the task's base commit (`check-files.ts`) is flagged on the card before it runs; with
 * `offPeak.check.whenAgentChangedIt` = `ask` it also waits for the user's answer, a question like
 * the agent's own (listed on the card, notified, parked when nobody answers in time, answered from
 * any window): Allow runs the check, Deny skips it.
 */
import type { PermissionMode } from '../../core/types';
import type { AskDelivery, AskRequest, PendingAsk } from '../questions/asks';
import { CHECK_ASK_TOOL } from '../questions/question-record';

export { CHECK_ASK_TOOL };

/** `run` (default): the flag only; `ask`: the check waits for an answer. */
export type WhenAgentChangedCheck = 'run' | 'ask';

/** The modes in which the agent asks before a command: there the check is the one command it does not ask for. */
const ASKS_BEFORE_COMMANDS: ReadonlySet<PermissionMode> = new Set<PermissionMode>(['default', 'acceptEdits']);

export type CheckGateResult =
  | { kind: 'run' }
  /** Not run: `reason` is the round's outcome text. */
  | { kind: 'skip'; reason: string }
  /** Nobody answered in time (park mode): the task parks on the question. */
  | { kind: 'parked'; askId: string }
  /** The segment stopped while the question waited. */
  | { kind: 'stopped' };

export interface CheckGateOptions {
  permissionMode: PermissionMode;
  whenAgentChangedIt(): WhenAgentChangedCheck;
  /** The check's files the agent changed since the base commit; null: unknown (not flagged). */
  changedFiles(command: string): Promise<string[] | null>;
  /** Writes the flag where the card reads it, before the check runs. */
  flag(files: string[]): Promise<void>;
  /** The runtime's asks for this task. */
  ask(request: AskRequest, deliver: AskDelivery): PendingAsk;
  /** The question left without an agent to end it: the task's open asks end (a parking one leaves). */
  endAsks(): void;
}

/** The question's whole input: what runs and what changed (the call digest is taken over it, so a stored answer fits only this). */
export function checkAskInput(command: string, files: readonly string[]): string {
  return `command: ${command}\nchanged by the agent: ${files.join(', ')}`;
}

export class CheckGate {
  private waiting: { askId: string; resolve: (result: CheckGateResult) => void } | null = null;
  private stopped = false;

  constructor(private readonly options: CheckGateOptions) {}

  /** Whether the check may run; `show` writes to the segment's terminal and log. */
  async decide(command: string, show: (text: string) => void): Promise<CheckGateResult> {
    const { options } = this;
    if (!ASKS_BEFORE_COMMANDS.has(options.permissionMode)) return { kind: 'run' };
    const files = await options.changedFiles(command).catch(() => null);
    if (!files || files.length === 0) return { kind: 'run' };
    await options.flag(files);
    const named = files.join(', ');
    show(`\n[off-peak] the agent changed files this check runs (${named}); the check runs outside the permission mode\n`);
    if (options.whenAgentChangedIt() !== 'ask') return { kind: 'run' };
    if (this.stopped) return { kind: 'stopped' };
    show('[off-peak] the check waits for your answer (offPeak.check.whenAgentChangedIt is "ask")\n');
    return new Promise<CheckGateResult>((resolve) => {
      const ask = options.ask(
        {
          tool: CHECK_ASK_TOOL,
          summary: `${command} (the agent changed ${named})`,
          input: checkAskInput(command, files),
          deadlineAt: null,
        },
        (decision, by) => {
          this.waiting = null;
          if (decision === 'allow') return resolve({ kind: 'run' });
          const why = by === 'timeout' ? 'nobody answered in time' : by === 'ended' ? 'the segment ended' : 'the answer was No';
          resolve({ kind: 'skip', reason: `Check skipped: the agent changed ${named}, and ${why}.` });
        },
      );
      this.waiting = { askId: ask.id, resolve };
    });
  }

  /** The question `askId` parks the task: true when it was this gate's. */
  park(askId: string): boolean {
    const waiting = this.waiting;
    if (!waiting || waiting.askId !== askId) return false;
    this.waiting = null;
    waiting.resolve({ kind: 'parked', askId });
    this.options.endAsks();
    return true;
  }

  /** The segment stops (cancel, a window that closes): a waiting question ends with it. */
  stop(): void {
    this.stopped = true;
    const waiting = this.waiting;
    if (!waiting) return;
    this.waiting = null;
    waiting.resolve({ kind: 'stopped' }); // first: ending the asks answers this one "ended"
    this.options.endAsks();
  }
}
