// Follow up… and Open session with the real `claude` CLI (installed under .tools/ by
// scripts/setup-claude-code.ts), the REAL reference gateway on loopback and our local ticket
// proxy, in front of the scripted fake model upstream (a test fixture standing in for the model
// API). docs/flows.md#follow-up, docs/flows.md#open-session
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ensureClaudeCode } from '../../scripts/setup-claude-code';
import { PROXY_DUMMY_TOKEN } from '../../src/agent/runtime/agent-adapter';
import type { RuntimeEvent } from '../../src/agent/runtime/task-runtime';
import type { HostEngine } from '../../src/engine/host-engine';
import type { RecordedRequest, ScriptedReply } from '../fixtures/fake-anthropic-upstream';
import { makeGitWorkspace, startWorld, type GatewayWorld } from '../e2e/gateway-fixture';
import { claudeConfigDir, finished, startClaudeHost } from './claude-code-harness';

type Body = { tools?: { name: string }[]; messages?: { role: string; content: string | { type: string; text?: string }[] }[] };

/** The conversation's texts ("role: text"), skipping Claude Code's own reminders. */
function texts(body: unknown): string[] {
  return ((body as Body).messages ?? []).flatMap((m) =>
    (typeof m.content === 'string' ? [m.content] : m.content.filter((c) => c.type === 'text').map((c) => c.text ?? ''))
      .filter((t) => !t.startsWith('<system-reminder>'))
      .map((t) => `${m.role}: ${t}`),
  );
}

/** Main-loop requests carry the tools; titles and summaries do not. */
const isMain = (r: RecordedRequest) => ((r.body as Body).tools ?? []).length > 0;

function scriptedModel(request: RecordedRequest): ScriptedReply {
  if (!isMain(request)) return { kind: 'text', text: 'ok' };
  const said = texts(request.body).join('\n');
  if (said.includes('Which code word')) return { kind: 'text', text: 'The code word was PELICAN.' };
  return { kind: 'text', text: 'Noted: the code word is PELICAN.' };
}

describe('Claude Code sessions (real claude CLI, real gateway, local ticket proxy)', function () {
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

  it('a follow-up resumes the Claude Code session from the same folder (the model sees the first task turns); Open session runs claude --resume there, without the proxy', async function () {
    world = await startWorld({});
    world.upstream.setDefaultReply(scriptedModel);
    const events: RuntimeEvent[] = [];
    const configDir = claudeConfigDir(world);
    host = await startClaudeHost(world, claude, events);
    const ws = makeGitWorkspace(world.root);

    const first = await host.service.create({
      title: 'remember',
      prompt: 'Remember the code word PELICAN. Reply briefly.',
      permissionMode: 'plan',
      workspacePath: ws,
    });
    const done = await finished(host, first.id);
    assert.equal(done.status, 'completed', `failed: ${done.failureReason}`);
    const session = done.sessionId!;
    const mainBefore = world.upstream.messageRequests().filter(isMain).length;

    const follow = await host.service.followUp(first.id, { prompt: 'Which code word did I give you?' });
    const followDone = await finished(host, follow.id);
    assert.equal(followDone.status, 'completed', `failed: ${followDone.failureReason}`);

    const starts = events.filter((e): e is Extract<RuntimeEvent, { type: 'segment-started' }> => e.type === 'segment-started');
    assert.deepEqual(
      starts.map((s) => [s.taskId, s.sessionId, s.resume]),
      [
        [first.id, session, false],
        [follow.id, session, true],
      ],
    );
    const request = world.upstream.messageRequests().filter(isMain)[mainBefore];
    const said = texts(request.body);
    assert.ok(
      said.some((t) => t.startsWith('user: Remember the code word PELICAN')),
      `the first task's prompt is in the resumed conversation: ${JSON.stringify(said)}`,
    );
    assert.ok(said.includes('assistant: Noted: the code word is PELICAN.'), 'and its answer');
    assert.match(said.at(-1)!, /^user: Which code word did I give you\?/);
    assert.deepEqual(
      host.service
        .history()
        .map((r) => r.taskId)
        .sort(),
      [first.id, follow.id].sort(),
    );
    assert.notEqual(host.service.ticketsOf(follow.id)[0].ticketId, host.service.ticketsOf(first.id)[0].ticketId);

    // Open session: Claude Code keeps the session under the folder that made it, where the terminal starts.
    const view = await host.sessions.view(first.id, { ...process.env, ANTHROPIC_AUTH_TOKEN: PROXY_DUMMY_TOKEN });
    assert.equal(view.kind, 'interactive');
    if (view.kind !== 'interactive') return;
    assert.equal(view.terminal.shellPath, claude);
    assert.deepEqual(
      view.terminal.shellArgs,
      ['--resume', session, '--setting-sources', 'user', '--strict-mcp-config'],
      'the setting sources its segments ran with',
    );
    assert.equal(view.terminal.cwd, ws);
    assert.equal(view.terminal.env.CLAUDE_CONFIG_DIR, configDir, 'the config dir the segments used');
    assert.equal(view.terminal.env.ANTHROPIC_AUTH_TOKEN, null, "the proxy's dummy token is removed");
    const sessionFile = path.join(configDir, 'projects', ws.replace(/[^A-Za-z0-9]/g, '-'), `${session}.jsonl`);
    const transcript = fs.readFileSync(sessionFile, 'utf8');
    assert.match(transcript, /Which code word did I give you/, 'the follow-up continued that very session file');
  });
});
