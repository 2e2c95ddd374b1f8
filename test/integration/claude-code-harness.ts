// What the tests with the real `claude` CLI (installed under .tools/ by scripts/setup-claude-code.ts)
// share: a host engine running Claude Code against a world's REAL reference gateway, and waiting for
// a task to end.
import path from 'node:path';
import type { RuntimeEvent } from '../../src/agent/runtime/task-runtime';
import type { HostEngine } from '../../src/engine/host-engine';
import { USER_KEY, type GatewayWorld } from '../e2e/gateway-fixture';
import { startTestEngine, waitFor, type TestEngineOptions } from '../e2e/test-engine';

/** Claude Code's config folder of a world's host (its sessions are kept under `projects/`). */
export const claudeConfigDir = (world: GatewayWorld): string => path.join(world.root, 'claude-config');

/** A host running Claude Code (`claude`) against the world's gateway, once it holds the lease; events go to `events`. */
export async function startClaudeHost(
  world: GatewayWorld,
  claude: string,
  events: RuntimeEvent[],
  extra: Partial<TestEngineOptions> = {},
): Promise<HostEngine> {
  const host = await startTestEngine({
    storageDir: path.join(world.root, 'globalStorage'),
    gatewayUrl: world.gateway.url,
    apiKey: USER_KEY,
    agent: 'claude-code',
    claudeCommand: claude,
    claudeConfigDir: claudeConfigDir(world),
    onEvent: (e) => events.push(e),
    ...extra,
  });
  await waitFor(() => host.service.isLeader, 'the lease');
  return host;
}

/** The task once it completed or failed. */
export function finished(host: HostEngine, taskId: string) {
  return waitFor(
    () => {
      const t = host.service.getTask(taskId)!;
      return t.status === 'completed' || t.status === 'failed' ? t : undefined;
    },
    'a terminal state',
    180_000,
  );
}
