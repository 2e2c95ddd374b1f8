// Away notifications (docs/flows.md#away-notifications): events go into the task DB's outbox
// (off_peak_notify_outbox) under a key, from whichever window sees them, and only the lease holder
// sends them, to the one target the user set. So each event is sent at most once across windows,
// and a hand-over of the lease neither loses nor repeats one: the new holder finds the outbox as
// the old one left it. Sending never blocks the engine: it runs beside it, a failed post is retried
// with growing delays a bounded number of times, and every failure goes to the log (the Output
// channel). Quiet hours hold events until they end; a held question that was answered meanwhile, or
// a held usage limit that is over, is dropped then, as no longer true. A question asked while the
// user is at a VS Code window waits a short grace first, and is not sent once answered.
import type { Clock } from '../core/clock';
import { CoalescingRun } from '../core/single-flight';
import { createSystemTimers, type TimerHandle, type Timers } from '../core/timers';
import { isTerminalStatus, NON_TERMINAL_STATUSES } from '../core/types';
import { NotifyEventSchema, type NotifyEvent, type NotifyTarget } from '../protocol/notify';
import { changeConcerns, type NotifyRow, type StoreReadTx, type TaskStore } from '../store';
import { INCLUDE_NOTHING, type NotifyInclude } from './notify-include';
import { messageOf, requestFor } from './notify-message';
import { postNotification, type SendResult } from './notify-sender';
import { quietUntil } from './quiet-hours';

export interface AwayNotificationsOptions {
  store: TaskStore;
  windowId: string;
  isLeader: () => boolean;
  clock: Clock;
  timers?: Timers;
  /** The target from SecretStorage, read at each send (undefined: none set). */
  target: () => Promise<NotifyTarget | undefined>;
  /** Whether a target is set now: events are only written to the outbox while one is. */
  enabled: () => boolean;
  /** `offPeak.notify.include.*`, read at each send. */
  include?: () => NotifyInclude;
  /** `offPeak.notify.quietHours`, read at each send. */
  quietHours?: () => string;
  timeZone?: () => string;
  /** Delay before each retry; its length bounds the attempts (default 2 s, 10 s, 1 min, 5 min: five attempts). */
  retryDelaysMs?: readonly number[];
  /** One post (tests: a receiver that fails; default ky). */
  send?: (request: { url: string; body: unknown }) => Promise<SendResult>;
  /**
   * Whether the user is at a VS Code window now (this one or another has focus). A question asked
   * then waits `questionGraceMs` before it is pushed, and is not pushed once answered.
   */
  presence?: () => boolean;
  /** How long a question asked while a window has focus waits for an answer there (default 60 s). */
  questionGraceMs?: number;
  /** How a time of day is worded in a message. */
  formatTime?: (at: number) => string;
  log?: (line: string) => void;
}

/** A question the user may be answering in the editor is pushed only when still open after this. */
export const DEFAULT_QUESTION_GRACE_MS = 60_000;
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [2_000, 10_000, 60_000, 300_000];
/** Finished outbox rows are kept this long (diagnostics), then pruned by the holder. */
const KEEP_DONE_MS = 7 * 24 * 3600_000;

/** Event keys: one event, one key, whoever writes it. */
export const notifyKeys = {
  question: (taskId: string, askId: string) => `ask:${taskId}:${askId}`,
  /** A result: the task's end time tells a later run of the same task apart. */
  result: (taskId: string, endedAt: number | null) => `result:${taskId}:${endedAt ?? 0}`,
  usageLimitHold: (resetAt: number) => `limit-hold:${resetAt}`,
  usageLimitEnd: (resetAt: number) => `limit-end:${resetAt}`,
};

/** The latest usage-limit reset still ahead that a live task waits for (docs/flows.md#usage-limits), or null. */
export function heldUntil(tx: StoreReadTx): number | null {
  let latest: number | null = null;
  for (const task of tx.tasks.list({ status: [...NON_TERMINAL_STATUSES] })) {
    for (const t of tx.tickets.forTask(task.id)) {
      const at = t.usageLimitResetAt;
      if (at != null && at > tx.now && (latest === null || at > latest)) latest = at;
    }
  }
  return latest;
}

export class AwayNotifications {
  private readonly timers: Timers;
  private readonly log: (line: string) => void;
  private readonly delays: readonly number[];
  private readonly drains = new CoalescingRun(
    () => this.drainOnce(),
    (e) => this.log(`notify: ${e instanceof Error ? e.message : String(e)}`),
  );
  private subscription: { dispose(): void } | undefined;
  private timer: TimerHandle | undefined;
  private timerAt: number | undefined;
  private disposed = false;
  private prunedAt: number;
  private readonly writes = new Set<Promise<unknown>>();

  constructor(private readonly options: AwayNotificationsOptions) {
    this.timers = options.timers ?? createSystemTimers();
    this.log = options.log ?? (() => {});
    this.delays = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    this.prunedAt = options.clock.now();
  }

  start(): void {
    this.subscription = this.options.store.onDidChange((change) => {
      if (changeConcerns(change, 'notify', 'tickets', 'tasks')) this.kick();
    });
    this.kick();
  }

  /**
   * Writes an event to the outbox once (any window; the key makes a second write of the same event
   * a no-op). Nothing is written while no target is set. The check flow's outcomes (`ready` with
   * its checks, `check-failed`) come in here too.
   */
  enqueue(key: string, event: NotifyEvent): Promise<void> {
    if (this.disposed || !this.options.enabled()) return Promise.resolve();
    const parsed = NotifyEventSchema.safeParse(event);
    if (!parsed.success) {
      this.log(`notify: the ${event.kind} event does not fit its schema; not sent`);
      return Promise.resolve();
    }
    const json = JSON.stringify(parsed.data);
    // The user is at a window: the question is theirs to answer there first; pushed only if still open after the grace.
    const grace =
      event.kind === 'needs-input' && this.options.presence?.() ? (this.options.questionGraceMs ?? DEFAULT_QUESTION_GRACE_MS) : 0;
    const write = this.options.store
      .mutate((tx) => tx.notify.enqueue(key, json) && (grace === 0 || tx.notify.hold(key, tx.now + grace)))
      .then(
        () => this.kick(),
        (e: unknown) => this.log(`notify: could not record the ${event.kind} event: ${e instanceof Error ? e.message : String(e)}`),
      );
    this.writes.add(write);
    void write.finally(() => this.writes.delete(write));
    return write;
  }

  /** Looks at the outbox now (the lease holder sends; others do nothing). */
  kick(): void {
    if (!this.disposed) this.drains.request();
  }

  /** Resolves when no write, look or post is in flight. */
  async idle(): Promise<void> {
    while (this.writes.size > 0) await Promise.all([...this.writes]);
    await this.drains.idle();
  }

  /** Stops; a post in flight finishes (and is recorded) first, so the next holder does not send it again. */
  async dispose(): Promise<void> {
    await this.idle();
    this.disposed = true;
    this.subscription?.dispose();
    this.timers.clearTimeout(this.timer);
  }

  private async drainOnce(): Promise<void> {
    const { store, clock } = this.options;
    if (this.disposed || !this.options.isLeader()) return;
    if (this.options.enabled()) await this.watchUsageLimit();
    for (const row of store.read((tx) => tx.notify.due())) {
      if (this.disposed || !this.options.isLeader()) return;
      await this.deliver(row);
    }
    if (clock.now() - this.prunedAt > KEEP_DONE_MS / 7) {
      this.prunedAt = clock.now();
      await store.mutate((tx) => tx.notify.prune(tx.now - KEEP_DONE_MS));
    }
    this.schedule();
  }

  /** A usage-limit hold starts one event; when nothing waits for it any more, its end another. */
  private async watchUsageLimit(): Promise<void> {
    const { until, holds, ends } = this.options.store.read((tx) => ({
      until: heldUntil(tx),
      holds: tx.notify.keysLike('limit-hold:'),
      ends: new Set(tx.notify.keysLike('limit-end:')),
    }));
    const open = holds.map((k) => Number(k.slice('limit-hold:'.length))).filter((at) => !ends.has(notifyKeys.usageLimitEnd(at)));
    if (until !== null && !holds.includes(notifyKeys.usageLimitHold(until)))
      await this.enqueue(notifyKeys.usageLimitHold(until), { kind: 'usage-limit-hold', resetAt: until });
    // Ended: nothing waits for it (it reset, or a later reset replaced it: that one's end is told, not this one's).
    for (const at of open.filter((at) => at !== until)) {
      const replaced = until !== null || open.some((other) => other > at);
      await this.enqueue(notifyKeys.usageLimitEnd(at), { kind: 'usage-limit-end', resetAt: at });
      if (replaced)
        await this.options.store.mutate((tx) =>
          tx.notify.finish(notifyKeys.usageLimitEnd(at), 'dropped', this.options.windowId, 'a later usage limit replaced it'),
        );
    }
    if (until !== null) this.wakeAt(until + 1_000);
  }

  private async deliver(row: NotifyRow): Promise<void> {
    const { store, clock, windowId } = this.options;
    const parsed = NotifyEventSchema.safeParse(JSON.parse(row.event));
    if (!parsed.success) {
      await store.mutate((tx) => tx.notify.finish(row.key, 'dropped', windowId, 'unreadable event'));
      return;
    }
    const event = parsed.data;
    const target = await this.options.target();
    if (!target) {
      await store.mutate((tx) => tx.notify.finish(row.key, 'dropped', windowId, 'no notification target set'));
      return;
    }
    const quietEnd = quietUntil(this.options.quietHours?.() ?? '', clock.now(), this.timeZone());
    if (quietEnd !== null) {
      await store.mutate((tx) => tx.notify.hold(row.key, quietEnd));
      return;
    }
    // Held (the quiet hours, or a question's grace while the user was at a window): what is no longer true is not sent.
    if (row.heldUntil !== null && store.read((tx) => !stillTrue(tx, event))) {
      await store.mutate((tx) => tx.notify.finish(row.key, 'dropped', windowId, 'no longer true when its hold ended'));
      return;
    }
    const retryAt = clock.now() + (this.delays[Math.min(row.attempts, this.delays.length - 1)] ?? 0);
    if (!(await store.mutate((tx) => tx.notify.beginAttempt(row.key, retryAt)))) return;
    const message = messageOf(event, this.options.include?.() ?? INCLUDE_NOTHING, this.options.formatTime ?? defaultFormatTime);
    let result: SendResult;
    try {
      result = await (this.options.send ?? postNotification)(requestFor(target, message, clock.now()));
    } catch (e) {
      result = { ok: false, retryable: false, error: e instanceof Error ? e.name : 'error' };
    }
    const attempt = row.attempts + 1;
    if (result.ok) {
      await store.mutate((tx) => tx.notify.finish(row.key, 'sent', windowId));
      return;
    }
    const final = !result.retryable || attempt > this.delays.length;
    await store.mutate((tx) => tx.notify.attemptFailed(row.key, result.error, final, windowId));
    this.log(
      `notify: the ${event.kind} notification (attempt ${attempt}) failed: ${result.error}; ${final ? 'given up' : `retrying in ${Math.round((retryAt - clock.now()) / 1000)} s`}`,
    );
  }

  private timeZone(): string {
    return this.options.timeZone?.() ?? (Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC');
  }

  /** The next look: when the next pending event is due (a retry, the end of quiet hours). */
  private schedule(): void {
    const next = this.options.store.read((tx) => tx.notify.nextAttemptAt());
    if (next !== undefined) this.wakeAt(next);
  }

  private wakeAt(at: number): void {
    if (this.disposed || (this.timerAt !== undefined && this.timerAt <= at && this.timerAt > this.options.clock.now())) return;
    this.timers.clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = this.timers.setTimeout(
      () => {
        this.timerAt = undefined;
        this.kick();
      },
      Math.max(0, at - this.options.clock.now()),
    );
  }
}

/** Whether a held event still says something true when quiet hours end. */
function stillTrue(tx: StoreReadTx, event: NotifyEvent): boolean {
  if (event.kind === 'needs-input') {
    const task = tx.tasks.get(event.taskId);
    if (!task || isTerminalStatus(task.status)) return false;
    return (
      tx.asks.list().some((a) => a.id === event.askId && a.answer === null) ||
      tx.questions.parkedOpen([event.taskId]).some((q) => q.askId === event.askId)
    );
  }
  if (event.kind === 'usage-limit-hold') return heldUntil(tx) === event.resetAt;
  return true;
}

function defaultFormatTime(at: number): string {
  return new Date(at).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}
