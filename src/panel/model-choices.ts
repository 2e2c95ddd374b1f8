// The form's Model list after its first choice, the default (docs/flows.md#what-the-panel-says):
// what the gateway serves, from its models route (personal mode: the local authority asks the
// user's model API). A gateway without that route: its configs' allow-list. Empty: the default alone.
import type { GatewayClient } from '../gateway-client/client';
import type { ClientConfigsResponse } from '../protocol/gateway';

export async function modelChoices(
  gateway: Pick<GatewayClient, 'modelList'>,
  configs: ClientConfigsResponse | undefined,
  /** Personal mode: the model API refused the model key (401/403) when asked for its list. */
  onKeyRefused?: (status: number) => void,
): Promise<string[]> {
  try {
    const answer = await gateway.modelList();
    if (answer.upstream_refused !== undefined) onKeyRefused?.(answer.upstream_refused);
    return answer.models.map((m) => m.id);
  } catch {
    return configs?.allowed_models.map((m) => m.id) ?? [];
  }
}
