// When a banner above the cards stops being true (docs/flows.md#what-the-panel-says): pure rules
// the app applies on each snapshot, and tests check against the real host's snapshots.
import type { AvailabilityView } from '../src/protocol/webview';

/** An action's failure: when the panel heard of it, and the service's error code if it gave one. */
export interface ActionFailure {
  at: number;
  code?: string;
}

/** A failure because the gateway could not be reached is over once the gateway answered after it. */
export function failureOutlived(failure: ActionFailure, a: AvailabilityView): boolean {
  if (failure.code !== 'gateway_unavailable') return false;
  return a.kind !== 'unreachable' && a.kind !== 'checking' && a.lastSuccessAt !== undefined && a.lastSuccessAt > failure.at;
}

/** "The gateway cannot be reached" only when that is the problem: not while no API key is set (the no-key notice says what to do). */
export function gatewayUnreachableShown(a: AvailabilityView, hasApiKey: boolean): boolean {
  return a.kind === 'unreachable' && hasApiKey;
}

/** A confirmation without a task to follow (a follow-up queued, the key checked) has been seen once the panel was hidden after showing it. */
export function confirmationSeen(visible: boolean): boolean {
  return !visible;
}
