// Trust III (issue 28) item 1: an agent never outlives its window by more than about a second. A
// window process is killed with SIGKILL while its agent runs a long command: 2 s later nothing of
// the agent's process group is alive (the watchdog of docs/flows.md#segments killed it), so no
// orphaned agent goes on sending its login to a proxy that is gone. Real window process
// (host-process.ts), the real reference agent and its command, the real gateway; the model is the
// scripted fixture.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { spawnHost } from './spawn-host';
import { waitFor } from './test-engine';

/** True while any process of the agent's group is alive (Unix); on Windows, the agent itself. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(process.platform === 'win32' ? pgid : -pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

describe('a window killed mid-segment takes its agent along (real processes end to end)', function () {
  this.timeout(120_000);
  let world: GatewayWorld;
  const hosts: ChildProcess[] = [];
  let agentGroup: number | undefined;

  afterEach(async () => {
    for (const h of hosts) if (h.exitCode === null && h.signalCode === null) h.kill('SIGKILL');
    if (agentGroup !== undefined && groupAlive(agentGroup)) process.kill(process.platform === 'win32' ? agentGroup : -agentGroup, 'SIGKILL');
    await world.close();
  });

  it('item 1: a window process SIGKILLed mid-segment leaves no process of its agent alive 2 s later', async () => {
    world = await startWorld();
    const ws = makeGitWorkspace(world.root);
    world.upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: { command: 'echo started > started.txt; sleep 60' } });
    const host = spawnHost({
      storageDir: path.join(world.root, 'globalStorage'),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
      windowId: 'window-A',
      create: { title: 'long', prompt: 'long work', permissionMode: 'bypassPermissions', workspacePath: ws },
    });
    hosts.push(host.child);
    const started = await waitFor(() => host.lines.find((l) => l.event?.type === 'segment-started')?.event, 'the segment', 60_000);
    await waitFor(() => fs.existsSync(path.join(ws, 'started.txt')), 'the command to run', 30_000);
    agentGroup = started.pid!;
    assert.equal(groupAlive(agentGroup), true, 'the agent and its command run');

    host.child.kill('SIGKILL');
    await host.exited;
    await new Promise((r) => setTimeout(r, 2_000));
    assert.equal(groupAlive(agentGroup), false, 'no process of the agent group is alive 2 s after its window died');
  });
});
