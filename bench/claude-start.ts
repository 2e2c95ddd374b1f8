// Promotion -> first model request with the REAL Claude Code, beside the floor: a bare `claude -p`
// spawn -> its first model request, measured in the same run, one of each per round (bench/runtime.bench.ts).
//
// A round: (1) the floor: `claude -p` spawned straight at the model upstream (a fixture standing in
// for the model API), no proxy, no settings file, no permission relay, prompt on stdin; the time
// from its spawn to its first model request at the upstream. (2) The product: a queued task's
// ticket promoted by the REAL gateway, then everything the extension does (status answer, claim,
// dispatch, workplace, the segment's proxy, spawn, Claude Code with the permission relay as the
// extension starts it: the built dist/permission-mcp.js) to its first model request through the
// proxy and the gateway. The runtime's `segment-started` event gives the breakdown (where the time goes).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ensureClaudeCode } from '../scripts/setup-claude-code';
import { REPO_ROOT } from '../scripts/vscode/tools';
import type { RuntimeEvent } from '../src/agent/runtime/task-runtime';
import { makeGitWorkspace, startWorld, type GatewayWorld } from '../test/e2e/gateway-fixture';
import { waitFor } from '../test/e2e/test-engine';
import { claudeConfigDir, startClaudeHost } from '../test/integration/claude-code-harness';

export interface ClaudeStartRound {
  /** Bare `claude -p`: spawn -> first model request. */
  floorMs: number;
  /** Promotion -> first model request, through the extension. */
  totalMs: number;
  /** Promotion -> the dispatch reached the runtime (status answer, claim, window dispatch). */
  dispatchMs: number;
  /** The task's worktree, or its folder checked. */
  workplaceMs: number;
  /** The segment's proxy registered, the agent's files written, the process spawned. */
  spawnMs: number;
  /** Spawn -> the start recorded (snapshot, running mark); runs while the agent starts up. */
  recordMs: number;
  /** Spawn -> first model request: Claude Code's own start-up with the relay (held at the proxy until the start is recorded). */
  agentMs: number;
}

/** Claude Code (the floor's argv) at the upstream directly; resolves with spawn -> first model request. */
async function bareSpawnToFirstRequest(world: GatewayWorld, claude: string, workspace: string, model: string | null): Promise<number> {
  const before = world.upstream.messageRequests().length;
  const env = {
    ...process.env,
    ANTHROPIC_BASE_URL: world.upstream.url,
    ANTHROPIC_API_KEY: 'bench-floor-key',
    CLAUDE_CONFIG_DIR: claudeConfigDir(world),
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  };
  const spawnedAt = Date.now();
  const child = spawn(claude, ['-p', '--output-format', 'stream-json', '--verbose', ...(model ? ['--model', model] : [])], {
    cwd: workspace,
    env,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.stdin.end('say done');
  const first = await waitFor(() => world.upstream.messageRequests()[before], 'the bare first model request', 60_000);
  await exited;
  return first.receivedAt - spawnedAt;
}

export async function claudeStartRounds(rounds: number): Promise<ClaudeStartRound[]> {
  const relay = path.join(REPO_ROOT, 'dist', 'permission-mcp.js');
  if (!existsSync(relay)) throw new Error('dist/permission-mcp.js is missing: run npm run build');
  const claude = ensureClaudeCode();
  const world = await startWorld({ promoteIntervalMs: 0, segmentCapacity: 1 });
  world.upstream.setDefaultReply({ kind: 'text', text: 'done' });
  const events: RuntimeEvent[] = [];
  const host = await startClaudeHost(world, claude, events, { permissionRelay: { command: process.execPath, args: [relay] } });
  const samples: ClaudeStartRound[] = [];
  try {
    const ws = makeGitWorkspace(world.root);
    // A model the gateway allows (Claude Code's own default may not be on its list).
    const model = world.gateway.config.defaultModel ?? world.gateway.config.models[0]?.id ?? null;
    for (let i = 0; i < rounds; i++) {
      const floorMs = await bareSpawnToFirstRequest(world, claude, ws, model);
      const task = await host.service.create({ title: `c${i}`, prompt: 'say done', permissionMode: 'default', workspacePath: ws, model });
      await waitFor(() => host.service.getTask(task.id)?.queuePosition !== null, 'a queued snapshot', 30_000);
      await new Promise((r) => setTimeout(r, 300)); // its long-poll in flight
      const before = world.upstream.messageRequests().length;
      const readyAt = Date.now();
      const promoted = (await world.gateway.tick()).promoted ?? [];
      if (promoted.length === 0) throw new Error('the promote tick promoted nothing');
      const first = await waitFor(() => world.upstream.messageRequests()[before], 'the first model request', 60_000);
      const started = await waitFor(
        () => events.find((e) => e.type === 'segment-started' && e.taskId === task.id),
        'the segment start',
        60_000,
      );
      const done = await waitFor(
        () => {
          const t = host.service.getTask(task.id);
          return t && ['completed', 'failed'].includes(t.status) ? t : undefined;
        },
        'the end of the task',
        120_000,
      );
      if (done.status !== 'completed') throw new Error(`the Claude Code task failed: ${done.failureReason ?? ''}`);
      if (started.type !== 'segment-started' || !started.startup) throw new Error('the segment-started event carries no start-up times');
      const { dispatchedAt, workplaceAt, spawnedAt } = started.startup;
      samples.push({
        floorMs,
        totalMs: first.receivedAt - readyAt,
        dispatchMs: dispatchedAt - readyAt,
        workplaceMs: workplaceAt - dispatchedAt,
        spawnMs: spawnedAt - workplaceAt,
        recordMs: started.at - spawnedAt,
        agentMs: first.receivedAt - spawnedAt,
      });
    }
  } finally {
    await host.dispose();
    await world.close();
  }
  return samples;
}
