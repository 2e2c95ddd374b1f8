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
