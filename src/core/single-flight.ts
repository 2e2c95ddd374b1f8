/** At most one run at a time: a call while one is in flight shares its promise instead of starting another. */
export class SingleFlight<T> {
  private inflight: Promise<T> | undefined;

  run(start: () => Promise<T>): Promise<T> {
    this.inflight ??= start().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  /** Resolves when no run is in flight (whether it succeeded or failed). */
  async idle(): Promise<void> {
    await this.inflight?.catch(() => undefined);
  }
}

/**
 * At most one run at a time, and nothing asked for is lost: a request while a run is in flight
 * asks for exactly one more run right after it (requests made meanwhile coalesce into it).
 */
export class CoalescingRun {
  private inflight: Promise<void> | undefined;
  private again = false;

  /** @param onError where a failed run's error goes (the next request runs again regardless). */
  constructor(
    private readonly body: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  request(): void {
    if (this.inflight) {
      this.again = true;
      return;
    }
    this.inflight = this.body()
      .catch(this.onError)
      .finally(() => {
        this.inflight = undefined;
        if (this.again) {
          this.again = false;
          this.request();
        }
      });
  }

  /** Resolves when no run is in flight or asked for. */
  async idle(): Promise<void> {
    while (this.inflight) await this.inflight;
  }
}
