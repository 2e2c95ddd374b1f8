// Display helpers for what a card adds about its segments (pure; unit-tested in Node).
import { clockTime } from '../src/core/clock';

/** The line a running card shows while its model requests wait for an unreachable gateway. */
export function gatewayOutageText(since: number): string {
  return `Gateway unreachable since ${clockTime(since)} · waiting`;
}
