// Card parts about the task's segments, kept out of app.tsx: the gateway-outage line.
import { gatewayOutageText } from './card-extras';

/** A running task whose requests wait for an unreachable gateway (they are held, the task has not failed). */
export function GatewayOutageLine({ since }: { since: number | null }) {
  if (since === null) return null;
  return (
    <div class="gateway-outage" data-testid="gateway-outage" role="status">
      <span class="codicon codicon-debug-disconnect" aria-hidden="true" /> {gatewayOutageText(since)}
    </div>
  );
}
