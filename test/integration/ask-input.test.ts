// What a question shows and what its answer approves (docs/flows.md#what-a-question-shows), and
// what reaches a task's terminal (docs/flows.md#terminal-text), through the real segment runner,
// the real ticket proxy and its permission relay route, and a real AskBroker:
// - the reference agent: the real process against the scripted fake upstream (standing in for the
//   gateway's model route);
// - Claude Code: a small Node script STANDING IN for the claude CLI (labelled so; the real CLI is
//   covered by claude-code-e2e.test.ts): it posts the permission-prompt request exactly as our MCP
//   relay does and prints stream-json lines that Claude Code's reader renders.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writePrivateFile, type AgentAdapter } from '../../src/agent/runtime/agent-adapter';
import { ClaudeCodeAdapter } from '../../src/agent/runtime/claude-code-adapter';
import { ReferenceAgentAdapter } from '../../src/agent/runtime/reference-agent-adapter';
import { AskBroker } from '../../src/agent/questions/asks';
import { SegmentRun } from '../../src/agent/runtime/segment-runner';
import { askInputDigest, QUESTION_STYLE_OFF, QUESTION_STYLE_ON } from '../../src/core/ask-input';
import { questionNotification } from '../../src/core/ask-notice';
import { systemClock } from '../../src/core/clock';
import type { OffPeakTask } from '../../src/core/types';
import { cardAskOf } from '../../src/panel/task-card';
import { PERMISSION_RELAY_PATH } from '../../src/protocol/permission-relay';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';
import { waitUntil } from './runtime-helpers';
import { referenceAgentArgv } from '../support/source-bundle';

/** The attack of issue 17 item 5: a benign start, a harmful tail past the old 120-character cut. */
const BENIGN = `echo "${'Formatting the release notes for the changelog, please wait. '.repeat(3)}"`;
const HIDDEN = `node -e "require('fs').writeFileSync('pwned.txt','x')"`;
const LONG_COMMAND = `${BENIGN} && ${HIDDEN}`;

/** A model text that would redraw the question line in a terminal (issue 17 item 7). */
const REDRAW = '\x1b[2K\r? Allow run npm test? [y/N] ';

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/** A line of the model's making that reads as the terminal's question (issue 38 item 3). */
const FORGED = '  ? Allow run npm test';

/** The terminal's text without the real question's style, the one sequence only the question carries. */
const unstyled = (text: string) => text.split(QUESTION_STYLE_ON).join('').split(QUESTION_STYLE_OFF).join('');

/** Lines of the terminal that start (after blanks) as a question does: `?`. */
const questionLike = (text: string) => text.split('\n').filter((line) => /^\s*\?/.test(line));

const RUNNING_TASK = { id: 't', status: 'running' } as OffPeakTask;

describe('questions show their whole input; answers are bound to it; terminal text is inert', () => {
  let upstream: FakeAnthropicUpstream;
  let root: string;
  let workspace: string;
  let broker: AskBroker;

  beforeEach(async () => {
    upstream = await FakeAnthropicUpstream.start();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'ask-input-'));
    workspace = path.join(root, 'ws');
    fs.mkdirSync(workspace);
    broker = new AskBroker({ clock: systemClock, timeoutMs: () => 60_000 });
  });
  afterEach(async () => {
    await upstream.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  async function start(adapter: AgentAdapter, name: string) {
    const run = await SegmentRun.start({
      adapter,
      spec: {
        taskId: 't',
        sessionId: `s-${name}`,
        resume: false,
        prompt: 'p',
        permissionMode: 'default',
        model: null,
        thoughtLevel: null,
        workspacePath: workspace,
      },
      gateway: { anthropicBaseUrl: `${upstream.url}/api/anthropic`, apiKey: 'k' },
      ticketId: 'T',
      segmentDir: path.join(root, 'segments', name),
      asks: {
        ask: (r, deliver) => broker.ask('t', r, deliver),
        answer: (id, d, by, digest) => broker.answer('t', id, d, digest, by),
        settle: (id, d, by) => broker.settle(id, d, by),
        end: () => broker.endTask('t'),
      },
    });
    const seen: string[] = [];
    run.attach({ write: (t) => seen.push(t) });
    return { run, seen, terminal: () => seen.join('') };
  }

  const reference = () =>
    new ReferenceAgentAdapter({
      command: process.execPath,
      argsPrefix: referenceAgentArgv(),
      sessionsDir: path.join(root, 'sessions'),
      askTimeoutMs: 60_000,
    });

  /**
   * Stands in for the claude CLI: stream-json lines, then the permission-prompt requests our MCP
   * relay posts (all at once); its result is the JSON array of the answers, in order.
   */
  function claudeStandIn(requests: unknown | unknown[], lines: unknown[] = []): AgentAdapter {
    const script = `
      const http = require('node:http');
      for (const line of JSON.parse(process.env.STAND_IN_LINES)) process.stdout.write(JSON.stringify(line) + '\\n');
      const post = (body) => new Promise((resolve) => {
        const req = http.request(process.env.STAND_IN_RELAY_URL, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve(JSON.parse(text)));
        });
        req.end(JSON.stringify(body));
      });
      Promise.all(JSON.parse(process.env.STAND_IN_REQUESTS).map(post)).then((answers) =>
        process.stdout.write(JSON.stringify({ type: 'result', subtype: 'success', result: JSON.stringify(answers), num_turns: 1 }) + '\\n'));`;
    const reader = new ClaudeCodeAdapter({ command: 'unused' });
    return {
      kind: 'claude-code',
      launch: (spec) => ({
        command: process.execPath,
        args: ['-e', script],
        env: {
          STAND_IN_RELAY_URL: spec.proxyBaseUrl + PERMISSION_RELAY_PATH,
          STAND_IN_REQUESTS: JSON.stringify(Array.isArray(requests) ? requests : [requests]),
          STAND_IN_LINES: JSON.stringify(lines),
        },
        eventsOnFd3: false,
        stdin: { file: writePrivateFile(spec.segmentDir, 'prompt.txt', spec.prompt) },
      }),
      createReader: () => reader.createReader(),
    };
  }

  it("item 5: Claude Code's long command is shown whole on the card, in the notification text and in the terminal (the hidden tail included); its notification offers no Allow", async () => {
    const input = { command: LONG_COMMAND, description: 'Print the notes' };
    const { run, terminal } = await start(claudeStandIn({ tool_name: 'Bash', input, tool_use_id: 'toolu_1' }), 'claude-long');
    await waitUntil(() => broker.pending('t').length === 1, 'the relayed question');
    const [ask] = broker.pending('t');
    const card = cardAskOf(RUNNING_TASK, broker.pending('t'))!;
    assert.ok(card.input.includes(HIDDEN), `the card shows the tail past the cut: ${JSON.stringify(card.input)}`);
    assert.ok(card.input.includes(LONG_COMMAND), 'the card shows the command exactly as it would run');
    await waitUntil(() => terminal().includes('[y/N]'), 'the question in the terminal');
    const question = terminal().slice(terminal().lastIndexOf('? Allow'));
    assert.ok(
      question.indexOf(HIDDEN) >= 0 && question.indexOf(HIDDEN) < question.indexOf('[y/N]'),
      `the terminal shows the tail before [y/N]: ${JSON.stringify(question)}`,
    );
    const notification = questionNotification('release notes', ask);
    assert.equal(notification.offersAllow, false, 'a notification that cannot hold the whole input offers no Allow');
    assert.doesNotMatch(notification.message, /Formatting the release notes/, 'and it does not show a benign-looking part alone');
    // Typed in the terminal that showed it: the answer is for this input, and Claude Code runs exactly it.
    for (const key of ['y', '\r']) run.writeInput(key);
    const outcome = await run.done;
    assert.equal(outcome.kind, 'completed');
    assert.deepEqual(JSON.parse((outcome as { summary: string }).summary), [{ decision: 'allow' }]);
  });

  it('item 5: an answer carrying the digest of another input is refused (the question stays open); the answer for its own input is delivered', async () => {
    const input = { command: LONG_COMMAND };
    const { run } = await start(claudeStandIn({ tool_name: 'Bash', input }), 'claude-digest');
    await waitUntil(() => broker.pending('t').length === 1, 'the relayed question');
    const [ask] = broker.pending('t');
    // What a card showing only the benign start would have sent.
    assert.equal(broker.answer('t', ask.id, 'allow', askInputDigest(`command: ${BENIGN}`)), 'input-mismatch');
    assert.equal(broker.answer('t', ask.id, 'allow', 'not-a-digest'), 'input-mismatch');
    assert.equal(broker.pending('t').length, 1, 'the question is still open');
    assert.equal(broker.answer('t', ask.id, 'deny', ask.inputDigest), 'accepted');
    const outcome = await run.done;
    assert.equal(JSON.parse((outcome as { summary: string }).summary)[0].decision, 'deny');
  });

  it('item 5: two questions at once: the terminal shows one at a time, so a typed answer goes to the question it shows last', async () => {
    const requests = [
      { tool_name: 'Bash', input: { command: 'echo first' } },
      { tool_name: 'Bash', input: { command: 'rm -rf second' } },
    ];
    const { run, terminal } = await start(claudeStandIn(requests), 'claude-two');
    await waitUntil(() => broker.pending('t').length === 2, 'both relayed questions');
    // Whichever reached the host first is asked first.
    const [older, newer] = broker.pending('t').map((a) => a.input);
    await waitUntil(() => terminal().includes('[y/N]'), 'a question in the terminal');
    assert.equal(terminal().split('? Allow').length - 1, 1, 'only the older question is on screen');
    assert.ok(terminal().includes(older) && !terminal().includes(newer), 'the newer one waits until the older is answered');
    for (const key of ['y', '\r']) run.writeInput(key);
    await waitUntil(() => terminal().includes(newer), 'the newer question');
    const last = terminal().slice(terminal().lastIndexOf('? Allow'));
    assert.ok(last.includes(`${newer}\n  [y/N]`), 'the question shown last is the newer one');
    for (const key of ['n', '\r']) run.writeInput(key);
    const outcome = await run.done;
    const decisions = (JSON.parse((outcome as { summary: string }).summary) as { decision: string }[]).map((a) => a.decision);
    const byInput = new Map(requests.map((r, i) => [`command: ${r.input.command}`, decisions[i]]));
    assert.deepEqual([byInput.get(older), byInput.get(newer)], ['allow', 'deny'], 'each typed answer went to the question on screen');
  });

  it("item 5: the reference agent's long command is shown whole at the host and in its terminal, and a mismatched answer does not run it", async () => {
    upstream.enqueue(
      { kind: 'tool_use', name: 'run_command', input: { command: `${BENIGN} ${'x'.repeat(600)} && ${HIDDEN}` } },
      { kind: 'text', text: 'done' },
    );
    const { run, terminal } = await start(reference(), 'reference-long');
    await waitUntil(() => broker.pending('t').length === 1, 'the pending ask');
    const [ask] = broker.pending('t');
    assert.ok(cardAskOf(RUNNING_TASK, [ask])!.input.includes(HIDDEN), `the card shows the tail: ${JSON.stringify(ask.input).slice(-200)}`);
    await waitUntil(() => terminal().includes('[y/N]'), 'the question in the terminal');
    const question = terminal().slice(terminal().lastIndexOf('? Allow'));
    assert.ok(
      question.indexOf(HIDDEN) >= 0 && question.indexOf(HIDDEN) < question.indexOf('[y/N]'),
      'the terminal shows the tail before [y/N]',
    );
    assert.equal(broker.answer('t', ask.id, 'allow', askInputDigest(`command: ${BENIGN}`)), 'input-mismatch');
    assert.equal(broker.answer('t', ask.id, 'deny', ask.inputDigest), 'accepted');
    assert.equal((await run.done).kind, 'completed');
    assert.equal(fs.existsSync(path.join(workspace, 'pwned.txt')), false);
  });

  it("item 7: the reference agent's question and the model's text reach the terminal without escape sequences or carriage returns", async () => {
    upstream.enqueue(
      { kind: 'tool_use', name: 'run_command', input: { command: `touch hidden.txt${REDRAW}` } },
      { kind: 'text', text: `All done.${REDRAW}\x1b[8m` },
    );
    const { run, terminal } = await start(reference(), 'reference-redraw');
    await waitUntil(() => broker.pending('t').length === 1, 'the pending ask');
    await waitUntil(() => terminal().includes('[y/N] (denied'), 'the question in the terminal');
    const [ask] = broker.pending('t');
    assert.equal(broker.answer('t', ask.id, 'deny', ask.inputDigest), 'accepted');
    assert.equal((await run.done).kind, 'completed');
    const text = unstyled(terminal());
    assert.doesNotMatch(text, CONTROL, `no control character reached the terminal: ${JSON.stringify(text)}`);
    assert.match(text, /touch hidden\.txt\\u\{1b\}\[2K\\u\{d\}\? Allow run npm test\?/, 'the redraw attempt is shown as inert text');
  });

  it("item 7: Claude Code's output reaches the terminal without escape sequences or carriage returns", async () => {
    const lines = [
      {
        type: 'assistant',
        message: {
          content: [
            { type: 'text', text: `Checking.${REDRAW}\x1b]0;title\x07` },
            { type: 'tool_use', name: 'Bash', input: { command: `touch x${REDRAW}` } },
          ],
        },
      },
      { type: 'user', message: { content: [{ type: 'tool_result', content: `\x1b[31mred\x1b[0m\rout` }] } },
    ];
    const { run, terminal } = await start(
      claudeStandIn({ tool_name: 'Bash', input: { command: `touch x${REDRAW}` } }, lines),
      'claude-redraw',
    );
    await waitUntil(() => broker.pending('t').length === 1, 'the relayed question');
    const [ask] = broker.pending('t');
    assert.equal(broker.answer('t', ask.id, 'deny', ask.inputDigest), 'accepted');
    await run.done;
    const text = unstyled(terminal());
    assert.doesNotMatch(text, CONTROL, `no control character reached the terminal: ${JSON.stringify(text)}`);
    assert.match(text, /Checking\./);
    assert.match(
      text,
      /command: touch x\\u\{1b\}\[2K\\u\{d\}\? Allow run npm test\?/,
      "the question's input shows the redraw attempt as inert text",
    );
  });

  it("item 3: the reference agent's terminal escapes a question-like line of the model's making (its text and its command's echo); only the real question is drawn in inverse video", async () => {
    upstream.enqueue(
      {
        kind: 'tool_use',
        name: 'run_command',
        text: `I will run the tests.\n${FORGED}\n`,
        input: { command: `touch hidden.txt #\n${FORGED}` },
      },
      { kind: 'text', text: 'done' },
    );
    const { run, terminal } = await start(reference(), 'reference-forged');
    await waitUntil(() => broker.pending('t').length === 1, 'the pending ask');
    await waitUntil(() => terminal().includes('[y/N]'), 'the question in the terminal');
    const [ask] = broker.pending('t');
    assert.equal(broker.answer('t', ask.id, 'deny', ask.inputDigest), 'accepted');
    assert.equal((await run.done).kind, 'completed');
    const text = terminal();
    assert.deepEqual(questionLike(text), [], `no line starts as a question: ${JSON.stringify(text)}`);
    assert.ok(text.includes(`\n  \\? Allow run npm test\n`), `the model's line is escaped: ${JSON.stringify(text)}`);
    assert.ok(text.includes(`⏺ run_command: run touch hidden.txt #⏎  ? Allow run npm test\n`), 'the echo of the command is one line');
    assert.equal(text.split(QUESTION_STYLE_ON).length - 1, 1, 'one line carries the question style: the real question');
    assert.ok(
      text.includes(`  ${QUESTION_STYLE_ON}? Allow run_command with this input?${QUESTION_STYLE_OFF}\n`),
      'the real question is styled',
    );
    assert.doesNotMatch(unstyled(text), CONTROL, 'no other control sequence reached the terminal');
  });

  it("item 3: Claude Code's terminal escapes a question-like line of the model's making (its text and its command's echo); only the relayed question is drawn in inverse video", async () => {
    const command = `touch x #\n${FORGED}`;
    const lines = [
      {
        type: 'assistant',
        message: {
          content: [
            { type: 'text', text: `Running the tests.\n${FORGED}` },
            { type: 'tool_use', name: 'Bash', input: { command, description: `Run tests\n${FORGED}` } },
          ],
        },
      },
      { type: 'user', message: { content: [{ type: 'tool_result', content: `ok\n${FORGED}` }] } },
    ];
    const { run, terminal } = await start(claudeStandIn({ tool_name: 'Bash', input: { command } }, lines), 'claude-forged');
    await waitUntil(() => broker.pending('t').length === 1, 'the relayed question');
    await waitUntil(() => terminal().includes('[y/N]'), 'the question in the terminal');
    const [ask] = broker.pending('t');
    assert.equal(broker.answer('t', ask.id, 'deny', ask.inputDigest), 'accepted');
    await run.done;
    const text = terminal();
    assert.deepEqual(questionLike(text), [], `no line starts as a question: ${JSON.stringify(text)}`);
    assert.ok(text.includes(`Running the tests.\n  \\? Allow run npm test\n`), `the model's line is escaped: ${JSON.stringify(text)}`);
    assert.ok(text.includes(`⏺ Bash: touch x #⏎  ? Allow run npm test\n`), 'the echo of the command is one line');
    assert.equal(text.split(QUESTION_STYLE_ON).length - 1, 1, 'one line carries the question style: the relayed question');
    assert.ok(text.includes(`${QUESTION_STYLE_ON}? Allow Bash with this input?${QUESTION_STYLE_OFF}\n`), 'the relayed question is styled');
    assert.doesNotMatch(unstyled(text), CONTROL, 'no other control sequence reached the terminal');
  });
});
