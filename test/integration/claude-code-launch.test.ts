// How the real Claude Code CLI (installed under .tools/ by scripts/setup-claude-code.ts) is
// launched for a segment: prompt and settings through private files, stdin that does not make it
// wait, Ctrl+C from the task's terminal. It talks to OUR ticket proxy in front of the scripted
// fake model upstream (standing in for the gateway's model route).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClaudeCodeAdapter, type ClaudeSettingSources } from '../../src/agent/runtime/claude-code-adapter';
import type { PermissionMode } from '../../src/core/types';
import { SegmentRun } from '../../src/agent/runtime/segment-runner';
import { systemProcessHost, type ProcessHost } from '../../src/core/process-control';
import { FakeAnthropicUpstream, type RecordedRequest } from '../fixtures/fake-anthropic-upstream';
import { ensureClaudeCode } from '../../scripts/setup-claude-code';
import { processAlive } from '../e2e/gateway-fixture';
import { waitUntil } from './runtime-helpers';
import { gitVariants, useGit } from './git-variants';
import { makeHostileRepository, markersLeft } from './hostile-git-repo';

/** Every text the model was sent in one request (system prompt aside). */
function userText(request: RecordedRequest): string {
  const body = request.body as { messages?: { content: string | { type: string; text?: string }[] }[] };
  return (body.messages ?? [])
    .map((m) => (typeof m.content === 'string' ? m.content : m.content.map((c) => c.text ?? '').join('')))
    .join('\n');
}

describe('Claude Code launch (real claude CLI, local ticket proxy)', function () {
  let claude: string;
  let upstream: FakeAnthropicUpstream;
  let root: string;
  let workspace: string;

  before(function () {
    this.timeout(20 * 60_000); // the first run installs ~250 MB from npm
    claude = ensureClaudeCode((line) => console.log(`      ${line}`));
  });

  beforeEach(async () => {
    upstream = await FakeAnthropicUpstream.start();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'claude-launch-'));
    workspace = path.join(root, 'ws');
    fs.mkdirSync(workspace);
  });

  afterEach(async () => {
    await upstream.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  function start(
    segment: string,
    prompt: string,
    over: {
      permissionMode?: PermissionMode;
      settingSources?: ClaudeSettingSources;
      processes?: ProcessHost;
      env?: Record<string, string>;
    } = {},
  ) {
    return SegmentRun.start({
      adapter: new ClaudeCodeAdapter({
        command: claude,
        configDir: path.join(root, 'claude-config'),
        settingSources: over.settingSources,
        env: over.env,
      }),
      spec: {
        taskId: 'task-1',
        sessionId: crypto.randomUUID(),
        resume: false,
        prompt,
        permissionMode: over.permissionMode ?? 'default',
        model: 'fake-model',
        thoughtLevel: null,
        workspacePath: workspace,
      },
      gateway: { anthropicBaseUrl: `${upstream.url}/api/anthropic`, apiKey: 'user-key' },
      ticketId: `T-${segment}`,
      segmentDir: path.join(root, 'segments', segment),
      proxyTimings: { holdDefaultMs: 200, holdMaxMs: 200 },
      stopTimings: { sigintGraceMs: 5_000, sigtermGraceMs: 2_000 },
      processes: over.processes,
    });
  }

  it('item 3: a 50,000-character CJK prompt reaches the model, and neither it nor the proxy secret is in the agent argv or log', async function () {
    const prompt = '请把这个仓库里的测试全部升级并修复失败的部分。'.repeat(2_200).slice(0, 50_000) + ' END-OF-PROMPT';
    upstream.setDefaultReply({ kind: 'text', text: 'Understood; nothing to change.' });
    const run = await start('1', prompt);
    const secret = new URL(run.proxy.baseUrl).pathname.slice(1);
    assert.ok(secret.length >= 16, 'the proxy has a secret path prefix');
    const cmdline = fs.readFileSync(`/proc/${run.pid}/cmdline`, 'utf8');
    const outcome = await run.done;
    assert.equal(outcome.kind, 'completed', JSON.stringify(outcome));
    assert.ok(!cmdline.includes(secret), `the proxy secret is not in argv: ${cmdline.split('\0').join(' ')}`);
    assert.ok(!cmdline.includes('请把'), 'the prompt is not in argv');
    const sent = upstream.messageRequests().find((r) => userText(r).includes('END-OF-PROMPT'));
    assert.ok(sent, 'a model request carried the whole prompt');
    assert.ok(userText(sent).includes(prompt), 'the prompt arrived unchanged');
    assert.ok(!fs.readFileSync(run.logFile, 'utf8').includes(secret), 'the log does not hold the secret');
    for (const name of ['prompt.txt', 'claude-settings.json']) {
      assert.equal(fs.statSync(path.join(root, 'segments', '1', name)).mode & 0o777, 0o600, `${name} is private`);
    }
  });

  it('platform: Windows: the prompt file reaches Claude Code whole through a pipe, not as an inherited file (pipes only give the agent a console of its own for the graceful Ctrl+C; injected platform)', async function () {
    const real = systemProcessHost();
    // Windows' spawn rules on this machine (no process group); no process table, so no tree to read.
    const windowsRules: ProcessHost = {
      platform: 'win32',
      env: {},
      kill: (pid, signal) => real.kill(pid, signal === 0 ? 0 : 'SIGKILL'),
      run: async () => undefined,
    };
    const prompt = 'Read this whole prompt through a pipe. '.repeat(2_000) + 'END-OF-PROMPT';
    upstream.setDefaultReply({ kind: 'text', text: 'Understood; nothing to change.' });
    const run = await start('1', prompt, { processes: windowsRules });
    const stdin = fs.readlinkSync(`/proc/${run.pid}/fd/0`);
    assert.equal((await run.done).kind, 'completed');
    assert.match(stdin, /^(pipe|socket):\[/, `the agent's stdin is a pipe (Node's are socket pairs on Linux), not ${stdin}`);
    const sent = upstream.messageRequests().find((r) => userText(r).includes('END-OF-PROMPT'));
    assert.ok(sent && userText(sent).includes(prompt), 'the whole prompt arrived unchanged');
  });

  for (const variant of gitVariants()) {
    describe(`in a repository whose git config names commands (${variant.name})`, () => {
      useGit(variant);

      it("item 1: Claude Code's own git at its start runs nothing from the repository's config: fsmonitor, filters, hooks (through the real launch, plan mode)", async function () {
        const markers = path.join(root, 'markers');
        makeHostileRepository(workspace, markers);
        upstream.setDefaultReply({ kind: 'text', text: 'Nothing to do.' });
        assert.equal((await (await start('1', 'Say hello.', { permissionMode: 'plan' })).done).kind, 'completed');
        assert.deepEqual(markersLeft(markers), [], "Claude Code's git ran a command the repository's config names");
        // The control: -c settings from the host (GIT_CONFIG_PARAMETERS beats GIT_CONFIG_COUNT) name
        // an fsmonitor and a filter process again (an empty `process` beats `clean`), and the same launch
        // runs them: Claude Code does run git status here, and reads b.txt through the filter.
        const control = path.join(root, 'control');
        // The first start's git status refreshed the index: b.txt is touched again, so it is compared again.
        fs.utimesSync(path.join(workspace, 'b.txt'), new Date(2002, 2, 2), new Date(2002, 2, 2));
        const env = {
          GIT_CONFIG_PARAMETERS: `'core.fsmonitor'='touch ${control}-fsmonitor; false' 'filter.evil.process'='touch ${control}-filter'`,
        };
        assert.equal((await (await start('2', 'Say hello.', { permissionMode: 'plan', env })).done).kind, 'completed');
        assert.equal(fs.existsSync(`${control}-fsmonitor`), true, 'Claude Code ran git status with an fsmonitor at its start');
        assert.equal(fs.existsSync(`${control}-filter`), true, "Claude Code's git status read b.txt through a filter");
      });
    });
  }

  /** A repository that ships Claude Code hooks and an MCP server, each of which leaves a marker file when it runs. */
  function hostileRepository(): { hookMarker: string; mcpMarker: string } {
    const hookMarker = path.join(root, 'hook-ran');
    const mcpMarker = path.join(root, 'mcp-ran');
    const hook = [{ hooks: [{ type: 'command', command: `touch '${hookMarker}'` }] }];
    fs.mkdirSync(path.join(workspace, '.claude'));
    const settings = { hooks: { SessionStart: hook, UserPromptSubmit: hook, Stop: hook }, enableAllProjectMcpServers: true };
    fs.writeFileSync(path.join(workspace, '.claude', 'settings.json'), JSON.stringify(settings));
    fs.writeFileSync(path.join(workspace, '.claude', 'settings.local.json'), JSON.stringify(settings));
    const mcp = { mcpServers: { repo: { type: 'stdio', command: 'sh', args: ['-c', `touch '${mcpMarker}'; sleep 5`] } } };
    fs.writeFileSync(path.join(workspace, '.mcp.json'), JSON.stringify(mcp));
    return { hookMarker, mcpMarker };
  }

  it("item 8: a repository's hooks (.claude/settings*.json) and MCP servers (.mcp.json) do not run under a plan-mode task", async function () {
    const { hookMarker, mcpMarker } = hostileRepository();
    upstream.setDefaultReply({ kind: 'text', text: 'Nothing to do.' });
    const run = await start('1', 'Say hello.', { permissionMode: 'plan' });
    const cmdline = fs.readFileSync(`/proc/${run.pid}/cmdline`, 'utf8').split('\0');
    assert.equal((await run.done).kind, 'completed');
    assert.equal(fs.existsSync(hookMarker), false, 'a repository hook ran');
    assert.equal(fs.existsSync(mcpMarker), false, 'a repository MCP server was started');
    assert.equal(cmdline[cmdline.indexOf('--setting-sources') + 1], 'user', "only the user's own settings are loaded");
    assert.ok(cmdline.includes('--strict-mcp-config'), 'only the MCP servers the extension names');
  });

  it("item 8: the same repository's hooks do run when the user opts in to project settings (so the test above can fail)", async function () {
    const { hookMarker } = hostileRepository();
    upstream.setDefaultReply({ kind: 'text', text: 'Nothing to do.' });
    const run = await start('1', 'Say hello.', { permissionMode: 'plan', settingSources: 'user,project,local' });
    assert.equal((await run.done).kind, 'completed');
    assert.equal(fs.existsSync(hookMarker), true, "with project settings Claude Code runs the repository's hooks");
  });

  it('item 4: Claude Code does not wait for stdin at start (no "no stdin data received" warning)', async function () {
    upstream.setDefaultReply({ kind: 'text', text: 'Hello.' });
    const run = await start('1', 'Say hello.');
    assert.equal((await run.done).kind, 'completed');
    assert.doesNotMatch(fs.readFileSync(run.logFile, 'utf8'), /no stdin data received/i);
  });

  it('item 4: Ctrl+C in the task terminal stops Claude Code; other keys get a note, not a hang', async function () {
    // The model answers nothing: Claude Code sits in its first request until Ctrl+C.
    upstream.setDefaultReply({ kind: 'hang' });
    const run = await start('1', 'Say hello.');
    const shown: string[] = [];
    run.attach({ write: (text) => shown.push(text) });
    await upstream.waitForMessageRequest(1, 30_000);
    const pid = run.pid!;
    run.writeInput('y\r');
    run.writeInput('\x03');
    const outcome = await run.done;
    assert.equal(outcome.kind, 'failed');
    assert.match((outcome as { reason: string }).reason, /Ctrl\+C/);
    await waitUntil(() => !processAlive(pid), 'the agent to be gone', 5_000);
    assert.match(shown.join(''), /does not read terminal input here; Ctrl\+C stops it/);
    assert.match(shown.join(''), /\^C/);
  });
});
