// The form's Model list after its first choice, the default (docs/flows.md#what-the-panel-says):
// what the gateway serves, from its models route (personal mode: the local authority asks the
// user's model API). A gateway without that route: its configs' allow-list. Empty: the default alone.
import type { GatewayClient } from '../gateway-client/client';
import type { ClientConfigsResponse } from '../protocol/gateway';

export async function modelChoices(gateway: Pick<GatewayClient, 'models'>, configs: ClientConfigsResponse | undefined): Promise<string[]> {
  try {
    return (await gateway.models()).map((m) => m.id);
  } catch {
    return configs?.allowed_models.map((m) => m.id) ?? [];
  }
}
