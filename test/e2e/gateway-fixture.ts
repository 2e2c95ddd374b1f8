// Starts the REAL reference gateway (in-memory ticket store) in front of the scripted fake
// Anthropic upstream (a test fixture standing in for the model API), plus helpers.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Clock } from '../../src/core/clock';
import type { GatewayConfig } from '../../src/gateway/config';
import { startGateway, type GatewayServer } from '../../src/gateway/http/server';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';

export const USER_KEY = 'opk-e2e-user-key-0001';

export interface GatewayWorld {
  gateway: GatewayServer;
  upstream: FakeAnthropicUpstream;
  root: string;
  close(): Promise<void>;
}

/** `clock`: the gateway's (e.g. an OffsetClock a test moves past a usage limit's reset). */
export async function startWorld(config: Partial<GatewayConfig> = {}, clock?: Clock): Promise<GatewayWorld> {
  const upstream = await FakeAnthropicUpstream.start();
  const gateway = await startGateway({
    clock,
    config: {
      port: 0,
      store: 'memory',
      alwaysOpen: true,
      promoteIntervalMs: 100,
      queuedPollMs: 200,
      maxPollMs: 1_000,
      statusMaxWaitMs: 2_000,
      busyRetryAfterMs: 1_000,
      users: [{ id: 'e2e-user', apiKey: USER_KEY }],
      upstreamUrl: upstream.url,
      upstreamApiKey: 'upstream-secret',
      logLevel: 'silent',
      ...config,
    },
  });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-e2e-'));
  return {
    gateway,
    upstream,
    root,
    async close() {
      await gateway.close(0);
      await upstream.close();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A git workspace with one commit, so files_changed has a base. */
export function makeGitWorkspace(root: string, name = 'ws'): string {
  const ws = path.join(root, name);
  fs.mkdirSync(ws, { recursive: true });
  fs.writeFileSync(path.join(ws, 'README.md'), '# workspace\n');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ws, stdio: 'ignore' });
  git('init', '-q');
  git('-c', 'user.email=e2e@example.invalid', '-c', 'user.name=e2e', 'add', '.');
  git('-c', 'user.email=e2e@example.invalid', '-c', 'user.name=e2e', 'commit', '-q', '-m', 'initial');
  return ws;
}

export function processAlive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

type Body = { messages?: { role: string; content: string | { type: string; text?: string; id?: string; tool_use_id?: string }[] }[] };

/** The request body's messages as "role:type+type" strings, for asserting on resumed conversations. */
export function shape(body: unknown): string[] {
  return ((body as Body).messages ?? []).map(
    (m) => `${m.role}:${typeof m.content === 'string' ? 'text' : m.content.map((c) => c.type).join('+')}`,
  );
}

export function toolUseIds(body: unknown): string[] {
  const ids: string[] = [];
  for (const m of (body as Body).messages ?? []) {
    if (typeof m.content === 'string') continue;
    for (const c of m.content) if (c.type === 'tool_use' && c.id) ids.push(c.id);
  }
  return ids;
}
