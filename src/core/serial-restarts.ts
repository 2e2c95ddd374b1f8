import { CoalescingRun } from './single-flight';

/**
 * One thing (the window's engine) that restarts when settings change, never two at once: a
 * restart stops the running one, then starts the next; restarts asked for while one runs become
 * one more (a burst of setting changes, as typing in the Settings editor makes, is one restart
 * after the running one); after `stop` nothing starts again. docs/architecture.md#personal-mode
 */
export class SerialRestarts<T> {
  private current: Promise<T | undefined>;
  private waiting: Promise<T | undefined> | undefined;
  private stopped = false;
  private readonly restarts: CoalescingRun;
  private readonly live = new Set<T>();

  /**
   * @param start starts one (undefined when it could not); called at once for the first.
   * @param stop stops what `start` gave (undefined included: it may have half started).
   */
  constructor(
    private readonly start: () => Promise<T | undefined>,
    private readonly stop: (running: T | undefined) => Promise<void>,
    onError: (error: unknown) => void,
  ) {
    this.restarts = new CoalescingRun(() => this.restartOnce(), onError);
    this.current = this.startOne();
  }

  /** The one running once the starts and restarts asked for so far are done. */
  whenStarted(): Promise<T | undefined> {
    return this.waiting ?? this.current;
  }

  /** How many were started and not stopped: 0 or 1 (it counts what `start` gave). */
  get liveCount(): number {
    return this.live.size;
  }

  restart(): void {
    if (this.stopped) return;
    this.restarts.request();
    const waiting = this.restarts.idle().then(() => this.current);
    this.waiting = waiting;
    void waiting.finally(() => {
      if (this.waiting === waiting) this.waiting = undefined;
    });
  }

  /** Stops for good: after a restart under way, and nothing starts after it. */
  async stopAll(): Promise<void> {
    this.stopped = true;
    await this.restarts.idle();
    await this.stopOne();
  }

  private async restartOnce(): Promise<void> {
    if (this.stopped) return;
    await this.stopOne();
    if (this.stopped) return;
    this.current = this.startOne();
    await this.current;
  }

  private async startOne(): Promise<T | undefined> {
    const started = await this.start();
    if (started !== undefined) this.live.add(started);
    return started;
  }

  private async stopOne(): Promise<void> {
    const running = await this.current;
    this.current = Promise.resolve(undefined);
    if (running !== undefined) this.live.delete(running);
    await this.stop(running);
  }
}
