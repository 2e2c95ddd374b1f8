/** Injectable time source: production uses the wall clock, tests drive a manual one. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to; for deterministic tests of timed flows. */
export class ManualClock implements Clock {
  constructor(private current = 0) {}
  now(): number {
    return this.current;
  }
  set(ms: number): void {
    this.current = ms;
  }
  advance(ms: number): number {
    this.current += ms;
    return this.current;
  }
}

/** Local wall-clock time as "02:14" (the card's "Gateway unreachable since 02:14", the failure reason). */
export function clockTime(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}

/** A span of time in words for a message: "5 min", "20 s", "400 ms" (one rule for every message). */
export function durationWords(ms: number): string {
  if (ms >= 60_000) return `${Math.round(ms / 60_000)} min`;
  return ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
}
