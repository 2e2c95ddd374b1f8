// The REAL Codex CLI (`@openai/codex`, installed under .tools/ by scripts/setup-codex.ts) runs a task
// through the REAL reference gateway and our local ticket proxy, in front of the scripted fake
// Responses upstream (a TEST FIXTURE standing in for OpenAI's API). docs/flows.md#segments
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureCodex } from '../../scripts/setup-codex';
import { CONTINUATION_PROMPT } from '../../src/agent/runtime/agent-adapter';
import type { RuntimeEvent } from '../../src/agent/runtime/task-runtime';
import type { HostEngine } from '../../src/engine/host-engine';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from '../e2e/gateway-fixture';
import { startTestEngine, waitFor } from '../e2e/test-engine';
import {
  codexLimitHeaders,
  FakeResponsesUpstream,
  type RecordedResponsesRequest,
  type ScriptedResponsesReply,
} from '../fixtures/fake-responses-upstream';
import { finished } from './claude-code-harness';

const PROMPT = 'Write step one into one.txt with a shell command.';
const UPSTREAM_KEY = 'sk-openai-upstream-secret';

/** The texts of a request's conversation (user and assistant messages, function call outputs). */
function conversation(request: RecordedResponsesRequest): string[] {
  return (request.body?.input ?? []).flatMap((item) => {
    if (item.type === 'function_call_output') return [`output: ${String(item.output)}`];
    if (item.type === 'function_call') return [`call: ${String(item.arguments)}`];
    const content = Array.isArray(item.content) ? (item.content as { text?: string }[]) : [];
    return content.map((c) => `${String(item.role)}: ${c.text ?? ''}`);
  });
}

/**
 * Segment 1: a shell command that outlasts the ticket's active window; segment 2 (the continuation): done.
 * Commands run without a login shell (`login: false`): a login profile's own start-up is not what is tested.
 */
function scriptedModel(request: RecordedResponsesRequest): ScriptedResponsesReply {
  const said = conversation(request);
  if (said.some((t) => t.includes(CONTINUATION_PROMPT))) return { kind: 'text', text: 'Step one is written; the task is done.' };
  if (said.some((t) => t.startsWith('output:'))) return { kind: 'text', text: 'Step one ran.' };
  return { kind: 'function_call', name: 'exec_command', arguments: { cmd: 'echo one > one.txt; sleep 9', login: false } };
}

describe('Codex (real codex app-server, real gateway, local ticket proxy, fake Responses upstream)', function () {
  let codex: string;
  let world: GatewayWorld | undefined;
  let responses: FakeResponsesUpstream | undefined;
  let host: HostEngine | undefined;

  before(function () {
    this.timeout(20 * 60_000); // a first run installs ~424 MB from npm
    codex = ensureCodex((line) => console.log(`      ${line}`));
  });

  afterEach(async () => {
    await host?.dispose();
    host = undefined;
    await world?.close();
    await responses?.close();
  });

  it("item 2: one task over two segments (a 3102 between them) resumes one Codex thread: the kept thread id is on every upstream request, and the resumed turn carries the first segment's conversation", async function () {
    this.timeout(240_000);
    responses = await FakeResponsesUpstream.start();
    responses.enqueue(
      { kind: 'handler', handle: scriptedModel },
      { kind: 'handler', handle: scriptedModel },
      { kind: 'handler', handle: scriptedModel },
    );
    // Active window 8 s; the command sleeps 9 s, so Codex's next model request meets a real 3102.
    world = await startWorld({ activeWindowMs: 8_000, openaiUpstreamUrl: responses.url, openaiUpstreamApiKey: UPSTREAM_KEY });
    const events: RuntimeEvent[] = [];
    const storageDir = path.join(world.root, 'globalStorage');
    const codexHome = path.join(world.root, 'codex-home');
    fs.mkdirSync(codexHome);
    host = await startTestEngine({
      storageDir,
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'codex',
      codex: { command: codex, codexHome },
      onEvent: (e) => events.push(e),
    });
    await waitFor(() => host!.service.isLeader, 'the lease');
    const ws = makeGitWorkspace(world.root);
    const created = await host.service.create({
      title: 'codex task',
      prompt: PROMPT,
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
    });

    const done = await finished(host, created.id);
    assert.equal(done.failureReason, null, `failed: ${done.failureReason}`);
    assert.equal(done.status, 'completed');

    const starts = events.filter((e): e is Extract<RuntimeEvent, { type: 'segment-started' }> => e.type === 'segment-started');
    assert.deepEqual(
      starts.map((s) => s.resume),
      [false, true],
    );
    assert.equal(starts[1].sessionId, starts[0].sessionId);
    const ended = events
      .filter((e): e is Extract<RuntimeEvent, { type: 'segment-ended' }> => e.type === 'segment-ended')
      .map((e) => e.outcome.kind);
    assert.deepEqual(ended, ['segment-expired', 'completed']);

    // The thread Codex started in segment 1 is the one kept for the task's session, and every request is on it.
    const kept = JSON.parse(fs.readFileSync(path.join(storageDir, 'codex-threads', `${done.sessionId}.json`), 'utf8')) as {
      threadId: string;
    };
    const requests = responses.responseRequests();
    assert.equal(requests.length, 2, 'one per segment: the request between them met the 3102 at the gateway');
    assert.deepEqual([...new Set(requests.map((r) => r.headers['thread-id']))], [kept.threadId]);
    // The resumed turn's request carries segment 1's conversation: the task's prompt, the command and its output.
    const last = conversation(requests.at(-1)!);
    assert.ok(
      last.some((t) => t.includes(PROMPT)),
      'the first prompt',
    );
    assert.ok(
      last.some((t) => t.startsWith('call:') && t.includes('one.txt')),
      "segment 1's command",
    );
    assert.ok(
      last.some((t) => t.includes(CONTINUATION_PROMPT)),
      'the continuation prompt',
    );
    assert.equal(fs.readFileSync(path.join(done.workspacePath, 'one.txt'), 'utf8'), 'one\n');

    // Codex saw neither the user's gateway key nor the ticket: upstream got the gateway's OpenAI key only.
    assert.ok(requests.every((r) => r.headers.authorization === `Bearer ${UPSTREAM_KEY}`));
    assert.ok(requests.every((r) => r.headers['x-off-peak-ticket-id'] === undefined));
    // Each segment's answers were counted on its ticket (the fixture reports 20 in, 5 of them cached, 8 out per answer).
    await waitFor(() => host!.service.ticketsOf(created.id).length === 2 && host!.service.ticketsOf(created.id)[1].usage, 'the usage');
    const [ticket1, ticket2] = host.service.ticketsOf(created.id);
    assert.deepEqual([ticket1.endReason, ticket2.endReason], ['expired', 'completed']);
    assert.deepEqual([ticket2.usage?.inputTokens, ticket2.usage?.cacheReadTokens, ticket2.usage?.outputTokens], [15, 5, 8]);
  });
  it("item 5: Codex's usage limit (a 429 with its 5-hour window used up) holds its request in the segment until the reset, with nothing sent upstream meanwhile, and the same thread goes on", async function () {
    this.timeout(180_000);
    responses = await FakeResponsesUpstream.start();
    // The refusal says its window resets 4 s after the request came (the headers are made then).
    let resetAt = 0;
    responses.enqueue(
      {
        kind: 'handler',
        handle: () => {
          resetAt = (Math.ceil(Date.now() / 1000) + 4) * 1000;
          return { kind: 'error', status: 429, headers: codexLimitHeaders(4) };
        },
      },
      { kind: 'text', text: 'Done after the reset.' },
    );
    // Personal mode's gateway runs with accountLimits: the refusal holds the account until the reset.
    world = await startWorld({
      accountLimits: true,
      store: 'sqlite',
      db: path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-codex-limit-')), 'g.sqlite'),
      openaiUpstreamUrl: responses.url,
      openaiUpstreamApiKey: UPSTREAM_KEY,
    });
    const events: RuntimeEvent[] = [];
    const storageDir = path.join(world.root, 'globalStorage');
    const codexHome = path.join(world.root, 'codex-home');
    fs.mkdirSync(codexHome);
    host = await startTestEngine({
      storageDir,
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'codex',
      codex: { command: codex, codexHome },
      onEvent: (e) => events.push(e),
    });
    await waitFor(() => host!.service.isLeader, 'the lease');
    const created = await host.service.create({
      title: 'codex limit',
      prompt: 'Say done.',
      permissionMode: 'bypassPermissions',
      workspacePath: makeGitWorkspace(world.root),
    });
    const done = await finished(host, created.id);
    assert.equal(done.failureReason, null, `failed: ${done.failureReason}`);
    assert.equal(done.status, 'completed');
    const requests = responses.responseRequests();
    assert.equal(requests.length, 2, 'the refused request and the one after the reset: nothing during the hold');
    assert.ok(requests[1].at >= resetAt, 'the held request went upstream only after the reset');
    assert.equal(requests[1].headers['thread-id'], requests[0].headers['thread-id'], 'the same thread');
    const starts = events.filter((e) => e.type === 'segment-started');
    assert.equal(starts.length, 1, 'held within its segment (the reset is near)');
    const limits = events.filter((e): e is Extract<RuntimeEvent, { type: 'usage-limit' }> => e.type === 'usage-limit');
    // The reset as this machine's clock reads it (the proxy corrects it by the gateway's server time: a few ms here).
    assert.ok(
      limits.length > 0 && Math.abs(limits[0].resetAt! - resetAt) < 1000 && !limits[0].park,
      'the hold was reported with its reset',
    );
  });
  for (const decision of ['allow', 'deny'] as const)
    it(`item 3: in "Ask before edits and commands", Codex's approval request is a pending question at the host; ${decision} -> its command ${decision === 'allow' ? 'runs' : 'does not run'}`, async function () {
      this.timeout(180_000);
      responses = await FakeResponsesUpstream.start();
      const script = (request: RecordedResponsesRequest): ScriptedResponsesReply =>
        conversation(request).some((t) => t.startsWith('output:'))
          ? { kind: 'text', text: 'Finished.' }
          : {
              kind: 'function_call',
              name: 'exec_command',
              arguments: {
                cmd: 'echo asked > asked.txt',
                login: false,
                sandbox_permissions: 'require_escalated',
                justification: 'Write asked.txt?',
              },
            };
      for (let i = 0; i < 4; i++) responses.enqueue({ kind: 'handler', handle: script });
      world = await startWorld({ openaiUpstreamUrl: responses.url, openaiUpstreamApiKey: UPSTREAM_KEY });
      const events: RuntimeEvent[] = [];
      const codexHome = path.join(world.root, 'codex-home');
      fs.mkdirSync(codexHome);
      host = await startTestEngine({
        storageDir: path.join(world.root, 'globalStorage'),
        gatewayUrl: world.gateway.url,
        apiKey: USER_KEY,
        agent: 'codex',
        codex: { command: codex, codexHome },
        onEvent: (e) => events.push(e),
      });
      await waitFor(() => host!.service.isLeader, 'the lease');
      const ws = makeGitWorkspace(world.root);
      const created = await host.service.create({ title: 'ask', prompt: 'Write asked.txt.', permissionMode: 'default', workspacePath: ws });
      const asked = await waitFor(
        () =>
          host!.runtime.pendingAsks(created.id)[0] ??
          (['completed', 'failed'].includes(host!.service.getTask(created.id)!.status) && 'ended'),
        'the pending ask',
        120_000,
      );
      assert.notEqual(asked, 'ended', `the task ended without asking: ${host.service.getTask(created.id)!.failureReason}`);
      const ask = asked as Exclude<typeof asked, 'ended' | false>;
      // The command as Codex will run it, whole.
      assert.deepEqual([ask.tool, ask.summary], ['Codex command', "/bin/bash -c 'echo asked > asked.txt'"]);
      assert.equal(fs.existsSync(path.join(ws, 'asked.txt')), false, 'nothing ran before the answer');
      assert.equal(host.runtime.answerAsk(created.id, ask.id, decision, ask.inputDigest), 'accepted');
      const done = await finished(host, created.id);
      assert.equal(done.status, 'completed', `failed: ${done.failureReason}`);
      // Codex ran it, or told the model the user rejected it.
      const said = conversation(responses.responseRequests().at(-1)!).filter((t) => t.startsWith('output:'));
      assert.match(said.join('\n'), decision === 'allow' ? /Process exited with code 0/ : /rejected by user/);
      assert.equal(fs.existsSync(path.join(ws, 'asked.txt')), decision === 'allow');
      const answered = events.filter((e) => e.type === 'input-answered').map((e) => e.type === 'input-answered' && [e.decision, e.by]);
      assert.deepEqual(answered, [[decision, 'host']]);
    });
});
