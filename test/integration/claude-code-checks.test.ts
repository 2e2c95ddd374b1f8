// A task's check and its fix round (docs/flows.md#checks) with the real `claude` CLI (installed
// under .tools/ by scripts/setup-claude-code.ts), the REAL reference gateway on loopback and our
// local ticket proxy, in front of the scripted fake model upstream (a test fixture standing in for
// the model API), on a real git repository: the first attempt fails `node test.js`, and the
// session resumed with that output fixes it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ensureClaudeCode } from '../../scripts/setup-claude-code';
import type { RuntimeEvent } from '../../src/agent/runtime/task-runtime';
import type { HostEngine } from '../../src/engine/host-engine';
import { lastMessageHasToolResult, type RecordedRequest, type ScriptedReply } from '../fixtures/fake-anthropic-upstream';
import { makeGitWorkspace, startWorld, type GatewayWorld } from '../e2e/gateway-fixture';
import { finished, startClaudeHost } from './claude-code-harness';

const FEEDBACK = 'The check the user set for this task failed';
type Body = { tools?: { name: string }[]; messages?: { role: string; content: string | { type: string; text?: string }[] }[] };

function userText(body: Body): string {
  return (body.messages ?? [])
    .filter((m) => m.role === 'user')
    .map((m) => (typeof m.content === 'string' ? m.content : m.content.map((b) => b.text ?? '').join('\n')))
    .join('\n');
}

/** Claims it is done at first; once it is told the check's output, fixes greet.js with Bash. */
function scriptedModel(request: RecordedRequest): ScriptedReply {
  const body = request.body as Body;
  if (!(body.tools ?? []).some((t) => t.name === 'Bash')) return { kind: 'text', text: 'ok' };
  if (lastMessageHasToolResult(body)) return { kind: 'text', text: 'Fixed: greet.js says Hello now.' };
  if (userText(body).includes(FEEDBACK))
    return { kind: 'tool_use', name: 'Bash', input: { command: `echo "console.log('Hello')" > greet.js`, description: 'fix greet.js' } };
  return { kind: 'text', text: 'Done, I think.' };
}

describe('Claude Code with a check (real claude CLI, real gateway, real check command)', function () {
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

  it('the first attempt fails `node test.js`; the same session, told its exit code and output, fixes it and the check passes in round 2', async () => {
    world = await startWorld();
    world.upstream.setDefaultReply(scriptedModel);
    const events: RuntimeEvent[] = [];
    host = await startClaudeHost(world, claude, events, { checks: { timeoutMs: () => 60_000, maxRounds: () => 2 } });
    const ws = makeGitWorkspace(world.root);
    fs.writeFileSync(path.join(ws, 'greet.js'), "console.log('Goodbye')\n");
    fs.writeFileSync(
      path.join(ws, 'test.js'),
      "const out = require('node:fs').readFileSync('greet.js', 'utf8');\nif (out.includes('Hello')) { console.log('1 passing'); process.exit(0); }\nconsole.log('1 failing: expected greet.js to say Hello');\nprocess.exit(1);\n",
    );
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.email=e2e@example.invalid', '-c', 'user.name=e2e', ...args], { cwd: ws, stdio: 'ignore' });
    git('add', '.');
    git('commit', '-q', '-m', 'greet and its test');

    const created = await host.service.create({
      title: 'greet',
      prompt: 'Make greet.js say Hello.',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      checkCommand: 'node test.js',
    });
    const done = await finished(host, created.id);
    assert.equal(done.status, 'completed', `failed: ${done.failureReason}`);
    const check = host.store.read((tx) => tx.checks.get(created.id))!;
    assert.deepEqual([check.state, check.round, check.exitCode], ['passed', 2, 0]);
    assert.match(check.output ?? '', /1 passing/);
    assert.match(fs.readFileSync(path.join(ws, 'greet.js'), 'utf8'), /Hello/);

    const fed =
      world.upstream
        .messageRequests()
        .map((r) => userText(r.body as Body))
        .find((t) => t.includes(FEEDBACK)) ?? '';
    assert.match(fed, /Command: node test\.js/);
    assert.match(fed, /exited with code 1/);
    assert.match(fed, /1 failing: expected greet\.js to say Hello/, "the check's output reached the resumed session");
    const starts = events.filter((e): e is Extract<RuntimeEvent, { type: 'segment-started' }> => e.type === 'segment-started');
    assert.equal(starts.length, 1, 'one segment: the fix round ran on the same ticket');
    assert.equal(host.service.ticketsOf(created.id).length, 1);
    assert.equal(done.sessionId, starts[0].sessionId, 'one session');
  });
});
