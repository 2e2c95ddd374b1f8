// Trust III (issue 28) item 1: an agent does not outlive its window. A window process is killed with
// SIGKILL while its agent runs a 60 s command: soon after, nothing of the agent's process group is
// alive (the watchdog of docs/flows.md#segments killed it), so no orphaned agent goes on sending
// its login to a proxy that is gone. How soon is printed, not asserted (about a second on a quiet
// machine; the test allows 15 s, so a loaded machine does not fail it, and the command is 4x that).
// Real window process (host-process.ts), the real reference agent and its command, the real
// gateway; the model is the scripted fixture.
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
    if (agentGroup !== undefined && groupAlive(agentGroup))
      process.kill(process.platform === 'win32' ? agentGroup : -agentGroup, 'SIGKILL');
    await world.close();
  });

  it("item 1: a window process SIGKILLed mid-segment: its agent's whole process group is stopped well before the agent's 60 s command ends", async () => {
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
    const died = Date.now();
    const group = agentGroup;
    await waitFor(() => !groupAlive(group) || undefined, 'no process of the agent group to be alive after its window died', 15_000);
    console.log(`      the agent's group was gone ${Date.now() - died} ms after its window died`);
  });
});
