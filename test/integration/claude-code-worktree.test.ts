// A Claude Code task on its own branch (docs/flows.md#isolation) with the real `claude` CLI
// (installed under .tools/ by scripts/setup-claude-code.ts), the REAL reference gateway on
// loopback and our local ticket proxy, in front of the scripted fake model upstream (a test
// fixture standing in for the model API), on a real git repository.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ensureClaudeCode } from '../../scripts/setup-claude-code';
import { PROXY_DUMMY_TOKEN } from '../../src/agent/runtime/agent-adapter';
import type { RuntimeEvent } from '../../src/agent/runtime/task-runtime';
import type { HostEngine } from '../../src/engine/host-engine';
import { lastMessageHasToolResult, type RecordedRequest, type ScriptedReply } from '../fixtures/fake-anthropic-upstream';
import { makeGitWorkspace, startWorld, type GatewayWorld } from '../e2e/gateway-fixture';
import { claudeConfigDir, finished, startClaudeHost } from './claude-code-harness';

type Block = { type: string };
type Body = { tools?: { name: string }[]; messages?: { role: string; content: string | Block[] }[] };

/** Bash once (it outlives the 8 s segment, so the next request meets a real 3102), then finish. */
function scriptedModel(request: RecordedRequest): ScriptedReply {
  const body = request.body as Body;
  if (!(body.tools ?? []).some((t) => t.name === 'Bash')) return { kind: 'text', text: 'ok' };
  const results = (body.messages ?? [])
    .flatMap((m) => (typeof m.content === 'string' ? [] : m.content))
    .some((b) => b.type === 'tool_result');
  if (results || lastMessageHasToolResult(body)) return { kind: 'text', text: 'Step one is done; the task is complete.' };
  return { kind: 'tool_use', name: 'Bash', input: { command: 'sleep 9; pwd > step1.txt', description: 'step one' } };
}

describe('Claude Code on its own branch (real claude CLI, real gateway, real git)', function () {
  let claude: string;
  let world: GatewayWorld | undefined;
  let host: HostEngine | undefined;

  before(function () {
    this.timeout(20 * 60_000); // first run installs ~250 MB from npm
    claude = ensureClaudeCode((line) => console.log(`      ${line}`));
  });

  afterEach(async () => {
    await host?.dispose();
    host = undefined;
    await world?.close();
  });

  it('a task resumed after 3102 stays in its worktree with one Claude Code session; Open session runs claude --resume in that worktree', async function () {
    world = await startWorld({ activeWindowMs: 8_000 });
    world.upstream.setDefaultReply(scriptedModel);
    const events: RuntimeEvent[] = [];
    const configDir = claudeConfigDir(world);
    host = await startClaudeHost(world, claude, events);
    const ws = makeGitWorkspace(world.root);
    const created = await host.service.create({
      title: 'claude worktree',
      prompt: 'Run step one with Bash.',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      isolation: 'worktree',
    });
    const done = await finished(host, created.id);
    assert.equal(done.status, 'completed', `failed: ${done.failureReason}`);
    assert.deepEqual(
      host.service.ticketsOf(created.id).map((t) => t.endReason),
      ['expired', 'completed'],
    );

    const iso = host.store.read((tx) => tx.isolation.get(created.id))!;
    assert.equal(
      fs.readFileSync(path.join(iso.worktreePath!, 'step1.txt'), 'utf8').trim(),
      fs.realpathSync(iso.worktreePath!),
      'Bash ran in the worktree',
    );
    assert.ok(!fs.existsSync(path.join(ws, 'step1.txt')), "not in the user's folder");
    const starts = events.filter((e): e is Extract<RuntimeEvent, { type: 'segment-started' }> => e.type === 'segment-started');
    assert.deepEqual(
      starts.map((s) => s.resume),
      [false, true],
    );
    assert.equal(new Set(starts.map((s) => s.sessionId)).size, 1, 'one session');
    // Claude Code keeps sessions per working directory: the one session file is under the worktree's
    // (it may keep other things, like its memory folder, under the main repository's).
    const sessions = fs.readdirSync(path.join(configDir, 'projects')).flatMap((p) =>
      fs
        .readdirSync(path.join(configDir, 'projects', p))
        .filter((f) => f.endsWith('.jsonl'))
        .map((f) => `${p}/${f}`),
    );
    assert.deepEqual(sessions, [`${iso.worktreePath!.replace(/[^A-Za-z0-9]/g, '-')}/${done.sessionId}.jsonl`]);

    const view = await host.sessions.view(created.id, { ...process.env, ANTHROPIC_AUTH_TOKEN: PROXY_DUMMY_TOKEN });
    assert.equal(view.kind, 'interactive');
    if (view.kind === 'interactive') assert.equal(view.terminal.cwd, iso.worktreePath, 'Open session starts where the session is');
  });
});
