// A per-user count of something limited (waiting long-polls, model requests in flight), so one
// user's load cannot take what the gateway has for everyone.

export class PerUserLimit {
  private readonly held = new Map<string, number>();

  constructor(readonly max: number) {}

  /** Takes one for `userId`: a release function (safe to call twice), or null at the limit. */
  tryAcquire(userId: string): (() => void) | null {
    const count = this.held.get(userId) ?? 0;
    if (count >= this.max) return null;
    this.held.set(userId, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(userId) ?? 1) - 1;
      if (left <= 0) this.held.delete(userId);
      else this.held.set(userId, left);
    };
  }

  heldBy(userId: string): number {
    return this.held.get(userId) ?? 0;
  }
}
