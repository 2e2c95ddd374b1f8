// Claude Code end to end: the real `claude` CLI (npm `@anthropic-ai/claude-code`, installed
// idempotently under .tools/ by scripts/setup-claude-code.ts, also in CI) runs a task through
// OUR local ticket proxy and the REAL reference gateway, in front of the scripted fake model
// upstream. The 3102-mid-task scenario: the gateway expires the ticket while Claude Code runs a
// tool; the segment ends, the task is requeued, retakes a ticket and resumes the SAME Claude Code
// session (`--resume`), which finishes the task.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { lastMessageHasToolResult, type RecordedRequest, type ScriptedReply } from '../fixtures/fake-anthropic-upstream';
import { ensureClaudeCode } from '../../scripts/setup-claude-code';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from '../e2e/gateway-fixture';
import type { HostEngine } from '../../src/engine/host-engine';
import { startTestEngine, waitFor } from '../e2e/test-engine';
import { finished, startClaudeHost } from './claude-code-harness';
import type { PendingAsk } from '../../src/agent/questions/asks';
import { FIELD_BOUNDARY, QUESTION_STYLE_OFF } from '../../src/core/ask-input';
import type { RuntimeEvent } from '../../src/agent/runtime/task-runtime';

type Block = { type: string; id?: string; name?: string; tool_use_id?: string };
type Body = { tools?: { name: string }[]; messages?: { role: string; content: string | Block[] }[] };

function blocks(body: unknown): Block[] {
  return ((body as Body).messages ?? []).flatMap((m) => (typeof m.content === 'string' ? [] : m.content));
}

/** The scripted model: Bash once, then (once any tool result is in the conversation) finish. */
function scriptedModel(request: RecordedRequest): ScriptedReply {
  const body = request.body as Body;
  const hasBash = (body.tools ?? []).some((t) => t.name === 'Bash');
  if (!hasBash) return { kind: 'text', text: 'ok' }; // auxiliary requests (titles, summaries)
  if (blocks(body).some((b) => b.type === 'tool_result') || lastMessageHasToolResult(body))
    return { kind: 'text', text: 'Step one is done; the task is complete.' };
  return { kind: 'tool_use', name: 'Bash', input: { command: 'sleep 9; echo step1 > step1.txt', description: 'step one' } };
}

describe('Claude Code end to end (real claude CLI, real gateway, local ticket proxy)', function () {
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

  it('3102 mid-task -> requeue -> new ticket -> the same Claude Code session resumes -> completed', async function () {
    // Active window 8 s; Claude Code's Bash tool sleeps 9 s, so its next model request meets a real 3102.
    world = await startWorld({ activeWindowMs: 8_000 });
    world.upstream.setDefaultReply(scriptedModel);
    const events: RuntimeEvent[] = [];
    host = await startClaudeHost(world, claude, events);
    const ws = makeGitWorkspace(world.root);
    const created = await host.service.create({
      title: 'claude task',
      prompt: 'Run step one with Bash.',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
    });
    const done = await finished(host, created.id);
    assert.equal(done.failureReason, null, `failed: ${done.failureReason}`);
    assert.equal(done.status, 'completed');
    assert.ok(fs.existsSync(path.join(ws, 'step1.txt')), 'the Bash tool of segment 1 ran');

    const starts = events.filter((e): e is Extract<RuntimeEvent, { type: 'segment-started' }> => e.type === 'segment-started');
    assert.deepEqual(
      starts.map((s) => s.resume),
      [false, true],
    );
    assert.equal(starts[1].sessionId, starts[0].sessionId, 'the second segment resumed the same session');
    assert.equal(done.sessionId, starts[0].sessionId);
    const ended = events
      .filter((e): e is Extract<RuntimeEvent, { type: 'segment-ended' }> => e.type === 'segment-ended')
      .map((e) => e.outcome.kind);
    assert.deepEqual(ended, ['segment-expired', 'completed']);

    assert.equal(host.service.history().length, 1);
    await waitFor(
      () =>
        host!.service.ticketsOf(created.id).length === 2 && host!.service.ticketsOf(created.id).every((t) => t.settleState === 'settled'),
      'both tickets settled',
    );

    // The model saw segment 1's tool call again in the resumed conversation, on the new ticket.
    const main = world.upstream.messageRequests().filter((r) => ((r.body as Body).tools ?? []).some((t) => t.name === 'Bash'));
    const firstToolUse = blocks(main[main.length - 1].body).find((b) => b.type === 'tool_use');
    assert.ok(firstToolUse, 'the resumed request carries the earlier tool_use');
    const [ticket1, ticket2] = host.service.ticketsOf(created.id);
    assert.deepEqual([ticket1.endReason, ticket2.endReason], ['expired', 'completed']);
    assert.ok(ticket2.activeAt && ticket2.activeAt >= ticket1.segmentEndedAt!, 'the resumed request was admitted on the new ticket');
    assert.ok(blocks(main[main.length - 1].body).some((b) => b.type === 'tool_result' && b.tool_use_id === firstToolUse.id));
    // Claude Code never saw the user's key or the ticket: it talked to the local proxy with a dummy token.
    assert.ok(world.upstream.messageRequests().every((r) => r.headers['x-api-key'] === 'upstream-secret'));
  });

  const ASKED_COMMAND = `node -e "require('fs').writeFileSync('asked.txt', 'asked')"`;
  const cases = [
    { mode: 'default', decision: 'allow', via: 'host' },
    { mode: 'default', decision: 'deny', via: 'host' },
    { mode: 'default', decision: 'allow', via: 'terminal' },
    { mode: 'acceptEdits', decision: 'allow', via: 'host' },
  ] as const;
  for (const { mode, decision, via } of cases) {
    const modeName = mode === 'default' ? 'Ask before edits and commands' : 'Accept edits (commands ask)';
    it(`"${modeName}", headless: Claude Code's Bash call is a pending ask at the host; ${decision} ${via === 'host' ? 'through the runtime API' : 'typed in the task terminal'} -> the command ${decision === 'allow' ? 'runs' : 'does not run'}`, async function () {
      world = await startWorld({});
      world.upstream.setDefaultReply((request) => {
        const body = request.body as Body;
        if (!(body.tools ?? []).some((t) => t.name === 'Bash')) return { kind: 'text', text: 'ok' };
        if (blocks(body).some((b) => b.type === 'tool_result')) return { kind: 'text', text: 'Finished.' };
        // Not a plain file command: "Accept edits" lets those (echo > file, touch, mkdir) run without asking.
        return { kind: 'tool_use', name: 'Bash', input: { command: ASKED_COMMAND, description: 'write asked.txt' } };
      });
      const events: RuntimeEvent[] = [];
      host = await startClaudeHost(world, claude, events);
      const ws = makeGitWorkspace(world.root);
      const created = await host.service.create({
        title: 'ask',
        prompt: 'Write asked.txt with Bash.',
        permissionMode: mode,
        workspacePath: ws,
      });
      // Stops waiting when the task ended instead (the assertion below then says why).
      const asked = await waitFor(
        () =>
          host!.runtime.pendingAsks(created.id)[0] ??
          (['completed', 'failed'].includes(host!.service.getTask(created.id)!.status) && 'ended'),
        'the pending ask',
        180_000,
      ).catch((err: Error) => {
        const t = host!.service.getTask(created.id)!;
        const segment = host!.runtime.segment(created.id);
        throw new Error(
          `${err.message} (task ${t.status}, tickets ${JSON.stringify(host!.service.ticketsOf(created.id).map((k) => k.serverState))}); the agent's log so far: ${segment ? fs.readFileSync(segment.logFile, 'utf8').slice(-2_000) : '(no segment running)'}`,
        );
      });
      assert.notEqual(asked, 'ended', `the task ended without asking: ${host.service.getTask(created.id)!.failureReason}`);
      const ask = asked as PendingAsk;
      assert.equal(ask.tool, 'Bash');
      assert.deepEqual([ask.tool, ask.summary], ['Bash', ASKED_COMMAND], 'the tool once, beside what it would do');
      assert.equal(host.service.getTask(created.id)!.status, 'running');
      assert.equal(fs.existsSync(path.join(ws, 'asked.txt')), false, 'nothing ran before the answer');
      // The relay's URL (with the proxy secret) is in the 0600 MCP config file, not in argv.
      const segment = host.runtime.segment(created.id)!;
      const secret = new URL(segment.agentRun!.proxy.baseUrl).pathname.slice(1);
      assert.ok(!fs.readFileSync(`/proc/${segment.pid}/cmdline`, 'utf8').includes(secret), 'the proxy secret is not in argv');
      const mcpConfig = path.join(path.dirname(segment.logFile), 'claude-mcp.json');
      assert.equal(fs.statSync(mcpConfig).mode & 0o777, 0o600);

      const seen: string[] = [];
      host.runtime.attachTerminal(created.id, { write: (t) => seen.push(t) });
      if (via === 'host') assert.equal(host.runtime.answerAsk(created.id, ask.id, decision, ask.inputDigest), 'accepted');
      else {
        await waitFor(
          () =>
            seen.join('').includes(`? Allow Bash with this input?${QUESTION_STYLE_OFF}\n    ${FIELD_BOUNDARY} command: ${ASKED_COMMAND}\n`),
          'the question in the terminal',
        );
        for (const key of ['y', '\r']) host.runtime.writeInput(created.id, key);
      }
      const done = await finished(host, created.id);
      assert.equal(done.status, 'completed', `failed: ${done.failureReason}`);
      assert.equal(fs.existsSync(path.join(ws, 'asked.txt')), decision === 'allow');
      const answered = events.filter((e) => e.type === 'input-answered').map((e) => e.type === 'input-answered' && [e.decision, e.by]);
      assert.deepEqual(answered, [[decision, via]]);
      if (via === 'terminal') assert.match(seen.join(''), /\[y\/N\] [^\n]*\) y\n {4}→ allowed\n/, 'the typed answer was echoed');
      const last = world.upstream
        .messageRequests()
        .filter((r) => blocks(r.body).some((b) => b.type === 'tool_result'))
        .at(-1);
      assert.ok(last, 'the model saw the tool result');
      const result = blocks(last.body).find((b) => b.type === 'tool_result') as Block & { is_error?: boolean; content?: unknown };
      if (decision === 'deny') {
        assert.equal(result.is_error, true);
        assert.match(JSON.stringify(result.content), /The user denied this action/);
      } else {
        assert.notEqual(result.is_error, true);
      }
    });
  }
  // The scripted model (a fixture standing in for the model API) makes the allowed call again after
  // the resume; in the second case it rewords the call's description as a real model may: the
  // stored decision still answers it (docs/flows.md#questions-park-the-task).
  for (const reword of [false, true]) {
    it(`park (docs/flows.md#questions-park-the-task): Claude Code's unanswered Bash question parks the task and releases its ticket; Allow from another window resumes the same session and the command runs once${reword ? ", though the resumed model rewords the call's description" : ''}`, async function () {
      const PARK_COMMAND = `node -e "require('fs').appendFileSync('ran.txt', 'ran\\n')"`;
      world = await startWorld({ segmentCapacity: 1 });
      world.upstream.setDefaultReply((request) => {
        type Said = Block & { text?: string; is_error?: boolean };
        const body = request.body as { tools?: { name: string }[]; messages?: { role: string; content: string | Said[] }[] };
        if (!(body.tools ?? []).some((t) => t.name === 'Bash')) return { kind: 'text', text: 'ok' };
        const all: Said[] = (body.messages ?? []).flatMap((m) =>
          typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content,
        );
        if (all.some((b) => b.type === 'tool_result' && b.is_error !== true)) return { kind: 'text', text: 'Finished.' };
        const allowed = all.some((b) => b.type === 'text' && /ALLOWED: Bash/.test(b.text ?? ''));
        if (!all.some((b) => b.type === 'tool_use'))
          return { kind: 'tool_use', name: 'Bash', input: { command: PARK_COMMAND, description: 'append to ran.txt' } };
        if (allowed)
          return {
            kind: 'tool_use',
            name: 'Bash',
            input: { command: PARK_COMMAND, description: reword ? 'Run the command the user allowed' : 'append to ran.txt' },
          };
        return { kind: 'text', text: 'Stopped without the command.' };
      });
      const events: RuntimeEvent[] = [];
      const storageDir = path.join(world.root, 'globalStorage');
      host = await startClaudeHost(world, claude, events, { windowId: 'window-a', unansweredQuestion: 'park', askParkMs: 4_000 });
      const other = await startTestEngine({
        storageDir,
        gatewayUrl: world.gateway.url,
        apiKey: USER_KEY,
        agent: 'claude-code',
        claudeCommand: claude,
        windowId: 'window-b',
      });
      try {
        const ws = makeGitWorkspace(world.root);
        const created = await host.service.create({
          title: 'park',
          prompt: 'Append ran to ran.txt with Bash.',
          permissionMode: 'default',
          workspacePath: ws,
        });
        await waitFor(
          () =>
            host!.service.getTask(created.id)!.status === 'needs_input' ||
            ['completed', 'failed'].includes(host!.service.getTask(created.id)!.status),
          'the park',
          180_000,
        );
        const parked = host.service.getTask(created.id)!;
        assert.equal(parked.status, 'needs_input', `not parked: ${parked.failureReason}`);
        assert.equal(fs.existsSync(path.join(ws, 'ran.txt')), false, 'nothing ran before the answer');
        assert.equal(host.service.ticketsOf(created.id)[0].endReason, 'parked');
        await waitFor(() => host!.service.ticketsOf(created.id)[0].settleState === 'settled', 'the parked ticket settled');

        // The other window lists the parked question (from the shared DB) and answers it.
        const ask = await waitFor(() => other.questions.pendingAsks(created.id)[0], 'the parked question in the other window');
        assert.equal(ask.tool, 'Bash');
        assert.equal(await other.questions.answerAsk(created.id, ask.id, 'allow', ask.inputDigest), 'accepted');
        const done = await finished(host, created.id);
        assert.equal(done.status, 'completed', `failed: ${done.failureReason}`);
        assert.equal(done.sessionId, parked.sessionId, 'the same Claude Code session');
        assert.equal(fs.readFileSync(path.join(ws, 'ran.txt'), 'utf8'), 'ran\n', 'the command ran exactly once');
        assert.deepEqual(
          host.service.ticketsOf(created.id).map((t) => t.endReason),
          ['parked', 'completed'],
        );
        const answers = events.filter((e) => e.type === 'input-answered').map((e) => e.type === 'input-answered' && e.by);
        assert.deepEqual(answers, ['stored'], 'the resumed call was answered from the stored decision, without asking');
        // Claude Code drops the parked call from the resumed conversation: the continuation prompt carries its whole input.
        const prompts = world.upstream
          .messageRequests()
          .flatMap((r) =>
            ((r.body as Body).messages ?? []).flatMap((m) =>
              typeof m.content === 'string' ? [m.content] : m.content.map((b) => (b as Block & { text?: string }).text ?? ''),
            ),
          );
        assert.ok(
          prompts.some((t) => t.includes(`ALLOWED: Bash`) && t.includes(`<<<tool input\ncommand: ${PARK_COMMAND}\n`)),
          "the allowed call's whole input was in the resumed prompt",
        );
      } finally {
        await other.dispose();
      }
    });
  }
});
