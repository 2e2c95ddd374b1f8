// Permission questions in every window, answerable from any. A question lives in the memory of
// the window whose agent asks (only that window can deliver the answer to the agent), so that
// window publishes its open questions in the shared DB; the other windows' panels list them and
// leave an answer there, which the asking window applies as if its own card had been clicked
// (the first answer still wins: card, notification, terminal or deadline).
import type { AnswerResult, AskDecision, PendingAsk } from '../agent/questions/asks';
import { askInputDigest, digestMatches } from '../core/ask-input';
import type { TaskRuntime } from '../agent/runtime/task-runtime';
import os from 'node:os';
import type { DisposableLike } from '../core/disposable';
import { Emitter, type Event } from '../core/event';
import { isProcessAlive } from '../core/process-alive';
import { CoalescingRun } from '../core/single-flight';
import { changeConcerns, type TaskStore } from '../store';

export interface SharedAsksOptions {
  store: TaskStore;
  windowId: string;
  runtime: Pick<TaskRuntime, 'pendingAsks' | 'answerAsk' | 'onAsksChange'>;
  log?: (line: string) => void;
}

export class SharedAsks {
  private readonly log: (line: string) => void;
  private readonly changes = new Emitter<void>((e) => this.log(`asks: a listener failed: ${e instanceof Error ? e.message : String(e)}`));
  private readonly subscriptions: DisposableLike[] = [];
  private readonly publishing = new CoalescingRun(
    () => this.publishOnce(),
    (e) => this.log(`asks: could not publish: ${e instanceof Error ? e.message : String(e)}`),
  );
  private stopped = false;

  constructor(private readonly options: SharedAsksOptions) {
    this.log = options.log ?? (() => {});
  }

  start(): void {
    this.subscriptions.push(
      this.options.runtime.onAsksChange(() => {
        this.publish();
        this.fire();
      }),
    );
    const sub = this.options.store.onDidChange((change) => {
      if (!changeConcerns(change, 'asks')) return;
      if (change.origin === 'external') this.applyAnswersLeftHere();
      this.fire();
    });
    this.subscriptions.push(sub);
    this.publish();
  }

  /** Open questions: this window's from its runtime, the other windows' from the DB (oldest first). */
  pending(taskId?: string): PendingAsk[] {
    const local = this.options.runtime.pendingAsks(taskId);
    const localIds = new Set(local.map((a) => a.id));
    const remote = this.othersOpen()
      .filter((a) => a.answer === null && !localIds.has(a.id) && (taskId === undefined || a.taskId === taskId))
      // The digest is this window's own, of the input it will show: an answer here is for that text.
      .map(({ id, taskId: t, tool, summary, input, askedAt, deadlineAt }) => ({
        id,
        taskId: t,
        tool,
        summary,
        input,
        inputDigest: askInputDigest(input),
        askedAt,
        deadlineAt,
      }));
    return [...local, ...remote].sort((a, b) => a.askedAt - b.askedAt);
  }

  /**
   * Answers here if this window's agent asks; else leaves the answer for the window that runs it
   * ('accepted': it was left; that window applies it unless something answered first). The
   * answer carries the digest of the input shown where it was given: one for another input than
   * the question's is refused here, and again by the asking window against its own record.
   */
  async answer(taskId: string, askId: string, decision: AskDecision, inputDigest: string): Promise<AnswerResult> {
    if (this.options.runtime.pendingAsks(taskId).some((a) => a.id === askId))
      return this.options.runtime.answerAsk(taskId, askId, decision, inputDigest);
    const shared = this.othersOpen().find((a) => a.id === askId && a.taskId === taskId);
    if (!shared) return 'unknown';
    if (!digestMatches(shared.input, inputDigest)) return 'input-mismatch';
    const left = await this.options.store.mutate((tx) => tx.asks.leaveAnswer(askId, decision, inputDigest));
    return left ? 'accepted' : 'already-answered';
  }

  /** Fires when a question is asked or answered in any window. */
  readonly onChange: Event<void> = this.changes.event;

  /** Withdraws this window's questions (its agents stop with it). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const sub of this.subscriptions.splice(0)) sub.dispose();
    await this.publishing.idle();
    await this.options.store
      .mutate((tx) => tx.asks.publish(this.options.windowId, []))
      .catch((e: unknown) => this.log(`asks: ${String(e)}`));
  }

  /**
   * Other windows' questions, only of windows still there: a window that crashed leaves its rows
   * until the next registration drops them, and nothing would apply an answer to them.
   */
  private othersOpen() {
    try {
      return this.options.store.read((tx) => {
        const here = os.hostname();
        const live = new Set(
          tx.windows
            .list()
            .filter((w) => w.host !== here || isProcessAlive(w.pid))
            .map((w) => w.windowId),
        );
        return tx.asks.list().filter((a) => a.windowId !== this.options.windowId && live.has(a.windowId));
      });
    } catch {
      return [];
    }
  }

  private readShared() {
    try {
      return this.options.store.read((tx) => tx.asks.list());
    } catch {
      return [];
    }
  }

  /** Answers other windows left for this window's agents: applied as host answers. */
  private applyAnswersLeftHere(): void {
    for (const ask of this.readShared()) {
      if (ask.windowId !== this.options.windowId || ask.answer === null) continue;
      // Checked against this window's own record of the question, not the row (which any window could rewrite).
      const result = this.options.runtime.answerAsk(ask.taskId, ask.id, ask.answer, ask.answerDigest ?? '', 'other-window');
      this.log(`asks: an answer from another window for ${ask.taskId}: ${result}`);
    }
    // Answered questions leave the runtime (and so the DB); a stale one is withdrawn here.
    this.publish();
  }

  /** Makes the DB hold this window's open questions (single-flight). */
  private publish(): void {
    if (!this.stopped) this.publishing.request();
  }

  private async publishOnce(): Promise<void> {
    const open = this.options.runtime
      .pendingAsks()
      .map(({ id, taskId, tool, summary, input, askedAt, deadlineAt }) => ({ id, taskId, tool, summary, input, askedAt, deadlineAt }));
    await this.options.store.mutate((tx) => tx.asks.publish(this.options.windowId, open));
  }

  private fire(): void {
    this.changes.fire();
  }
}
