import type { Clock } from '../../core/clock';

/** A real clock that test hooks can move forward (never back): `now = base.now() + offset`. */
export class OffsetClock implements Clock {
  private offset = 0;
  constructor(private readonly base: Clock) {}
  now(): number {
    return this.base.now() + this.offset;
  }
  advance(ms: number): number {
    this.offset += ms;
    return this.now();
  }
}
