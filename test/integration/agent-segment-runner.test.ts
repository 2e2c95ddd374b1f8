// The segment runner with the real reference agent process and the real ticket proxy, against
// the scripted fake upstream (standing in for the gateway's model route).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ReferenceAgentAdapter } from '../../src/agent/runtime/reference-agent-adapter';
import { AskBroker, type AskEvent } from '../../src/agent/questions/asks';
import type { SegmentOutcome } from '../../src/agent/runtime/segment-outcome';
import { SegmentRun } from '../../src/agent/runtime/segment-runner';
import { systemClock } from '../../src/core/clock';
import { processTable, systemProcessHost, type ProcessHost } from '../../src/core/process-control';
import type { TicketProxyEvent } from '../../src/agent/proxy/ticket-proxy-types';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';
import { processAlive } from '../e2e/gateway-fixture';
import { waitUntil } from './runtime-helpers';
import { referenceAgentArgv } from '../support/source-bundle';

describe('segment runner (reference agent, real processes)', () => {
  let upstream: FakeAnthropicUpstream;
  let root: string;
  let workspace: string;
  let adapter: ReferenceAgentAdapter;

  beforeEach(async () => {
    upstream = await FakeAnthropicUpstream.start();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'seg-'));
    workspace = path.join(root, 'ws');
    fs.mkdirSync(workspace);
    adapter = new ReferenceAgentAdapter({
      command: process.execPath,
      argsPrefix: referenceAgentArgv(),
      sessionsDir: path.join(root, 'sessions'),
      env: { OFFPEAK_AGENT_RETRY_BASE_MS: '20' },
      askTimeoutMs: 60_000,
    });
  });
  afterEach(async () => {
    await upstream.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  function start(
    segment: string,
    overrides: {
      resume?: boolean;
      prompt?: string;
      permissionMode?: 'default' | 'bypassPermissions';
      processes?: ProcessHost;
      sigintGraceMs?: number;
    } = {},
    events: TicketProxyEvent[] = [],
  ) {
    return SegmentRun.start({
      adapter,
      spec: {
        taskId: 'task-1',
        sessionId: 'sess-1',
        resume: overrides.resume ?? false,
        prompt: overrides.prompt ?? 'do the task',
        permissionMode: overrides.permissionMode ?? 'bypassPermissions',
        model: 'fake-model',
        thoughtLevel: null,
        workspacePath: workspace,
      },
      gateway: { anthropicBaseUrl: `${upstream.url}/api/anthropic`, apiKey: 'user-key' },
      ticketId: `T-${segment}`,
      segmentDir: path.join(root, 'segments', segment),
      proxyTimings: { holdDefaultMs: 30, holdMaxMs: 30 },
      stopTimings: { sigintGraceMs: overrides.sigintGraceMs ?? 2_000, sigtermGraceMs: 2_000 },
      onProxyEvent: (e) => events.push(e),
      processes: overrides.processes,
    });
  }

  it('completes: output reaches the log file and an attached view; the agent saw only the proxy', async () => {
    upstream.enqueue(
      { kind: 'tool_use', name: 'write_file', input: { path: 'out.txt', content: 'x' } },
      { kind: 'text', text: 'Task complete.' },
    );
    const run = await start('1');
    const seen: string[] = [];
    let ended: SegmentOutcome | undefined;
    run.attach({ write: (t) => seen.push(t), end: (o) => (ended = o) });
    const outcome = await run.done;
    assert.deepEqual(outcome, { kind: 'completed', summary: 'Task complete.', exitCode: 0 });
    assert.deepEqual(ended, outcome);
    assert.match(fs.readFileSync(run.logFile, 'utf8'), /Task complete\./);
    assert.match(seen.join(''), /write_file/);
    const request = upstream.messageRequests()[0];
    assert.equal(request.headers.authorization, 'Bearer user-key');
    assert.equal(request.headers['x-off-peak-ticket-id'], 'T-1');
    assert.equal(fs.existsSync(run.pidFile), false);
  });

  it('maps 3102 to segment-expired, and the next segment resumes the same session', async () => {
    upstream.enqueue(
      { kind: 'tool_use', name: 'write_file', input: { path: 'a.txt', content: 'a' } },
      { kind: 'error', status: 400, code: '3102' },
    );
    const events: TicketProxyEvent[] = [];
    const first = await start('1', {}, events);
    assert.deepEqual(await first.done, { kind: 'segment-expired' });
    assert.ok(events.some((e) => e.type === 'segment-expired'));
    upstream.enqueue({ kind: 'text', text: 'finished after resume' });
    const second = await start('2', { resume: true, prompt: 'continue' });
    assert.equal((await second.done).kind, 'completed');
    const resumed = upstream.messageRequests()[2];
    assert.equal(resumed.headers['x-off-peak-ticket-id'], 'T-2');
    const messages = (resumed.body as { messages: { role: string; content: { type: string }[] }[] }).messages;
    assert.deepEqual(
      messages.map((m) => m.content.map((c) => c.type).join('+')),
      ['text', 'tool_use', 'tool_result+text'],
    );
    assert.ok(fs.existsSync(path.join(workspace, 'a.txt')));
  });

  it('cancel during a 3105 hold stops the agent; nothing is left running', async () => {
    upstream.setDefaultReply({ kind: 'error', status: 429, code: '3105', retryAfterSeconds: 1 });
    const run = await start('1');
    await upstream.waitForMessageRequest(2);
    await waitUntil(() => run.proxy.state === 'holding', 'the proxy to hold the request');
    const pid = run.pid!;
    await run.cancel();
    assert.deepEqual(await run.done, { kind: 'cancelled' });
    assert.equal(processAlive(pid), false);
  });

  it('cancel during a run (agent inside a long command) stops the agent and its children', async () => {
    const marker = path.join(root, 'child.pid');
    upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: { command: `echo $$ > ${marker}; sleep 60` } });
    const run = await start('1');
    await waitUntil(() => fs.existsSync(marker) && fs.readFileSync(marker, 'utf8').trim() !== '', 'the command to start');
    const childPid = Number(fs.readFileSync(marker, 'utf8').trim());
    assert.equal(processAlive(childPid), true);
    await run.cancel();
    assert.deepEqual(await run.done, { kind: 'cancelled' });
    assert.equal(processAlive(run.pid!), false);
    await waitUntil(() => !processAlive(childPid), 'the command to be gone', 5_000);
  });

  it("platform: cancel under Windows' rules stops the agent and its command (injected: no process groups or signals, only termination of one process; the process table as PowerShell gives it, read from this machine)", async () => {
    // Windows' rules over this machine's real processes: the agent leads no group, and a stop can
    // only terminate single processes, which it finds in the table PowerShell would print.
    const real = systemProcessHost();
    const windowsRules: ProcessHost = {
      platform: 'win32',
      env: { SystemRoot: 'C:\\Windows' },
      kill: (pid, signal) => real.kill(pid, signal === 0 ? 0 : 'SIGKILL'),
      run: async (file) => {
        if (!/powershell\.exe$/.test(file)) return undefined;
        const rows = (await processTable(real)) ?? [];
        return Buffer.from(
          JSON.stringify(rows.map((r) => ({ ProcessId: r.pid, ParentProcessId: r.ppid, CommandLine: r.command ?? null }))),
        );
      },
    };
    const marker = path.join(root, 'command.pid');
    upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: { command: `echo $$ > ${marker}; sleep 60` } });
    const run = await start('1', { processes: windowsRules });
    await waitUntil(() => fs.existsSync(marker) && fs.readFileSync(marker, 'utf8').trim() !== '', 'the command to start');
    const commandPid = Number(fs.readFileSync(marker, 'utf8').trim());
    try {
      await run.cancel();
      assert.deepEqual(await run.done, { kind: 'cancelled' });
      assert.equal(processAlive(run.pid!), false);
      await waitUntil(() => !processAlive(commandPid), 'the command to be stopped with its agent', 5_000);
    } finally {
      if (processAlive(commandPid)) process.kill(commandPid, 'SIGKILL');
    }
  });

  /**
   * Windows' rules over this machine's real processes, its Ctrl+C helper stood in for: `delivers`
   * sends the agent SIGINT (what Windows' Ctrl+C turns into in Node), `ignored` reaches an agent
   * that does not act on it, `fails` exits non-zero (helper missing, access denied). `steps` says
   * what reached which pid, in order.
   */
  function windowsStop(ctrlC: 'delivers' | 'ignored' | 'fails') {
    const real = systemProcessHost();
    const steps: string[] = [];
    const host: ProcessHost = {
      platform: 'win32',
      env: { SystemRoot: 'C:\\Windows' },
      ctrlCProgram: 'C:\\ext\\dist\\ctrlc-windows\\x64\\process-killer.exe',
      kill: (pid, signal) => {
        if (signal !== 0) steps.push(`terminate ${pid}`);
        real.kill(pid, signal === 0 ? 0 : 'SIGKILL');
      },
      run: async (file, args) => {
        if (file === host.ctrlCProgram) {
          steps.push(`ctrl-c ${args[0]}`);
          if (ctrlC === 'delivers') real.kill(Number(args[0]), 'SIGINT');
          return ctrlC === 'fails' ? undefined : Buffer.alloc(0);
        }
        if (!/powershell\.exe$/.test(file)) return undefined;
        const rows = (await processTable(real)) ?? [];
        return Buffer.from(
          JSON.stringify(rows.map((r) => ({ ProcessId: r.pid, ParentProcessId: r.ppid, CommandLine: r.command ?? null }))),
        );
      },
    };
    return { host, steps };
  }

  it('platform: Windows: a stop (the host going away) sends Ctrl+C to the agent first; an agent that ends on it is not terminated (injected platform, the helper stood in for by SIGINT)', async () => {
    upstream.setDefaultReply({ kind: 'error', status: 429, code: '3105', retryAfterSeconds: 1 });
    const { host, steps } = windowsStop('delivers');
    const run = await start('1', { processes: host, sigintGraceMs: 60_000 });
    await upstream.waitForMessageRequest(2);
    const pid = run.pid!;
    await run.interrupt(); // not cancel: a cancelled proxy would end the agent's request by itself
    assert.deepEqual(await run.done, { kind: 'interrupted' });
    assert.equal(steps[0], `ctrl-c ${pid}`);
    assert.ok(!steps.includes(`terminate ${pid}`), `the agent ended on Ctrl+C, not by force: ${steps.join(', ')}`);
    assert.match(fs.readFileSync(run.logFile, 'utf8'), /\[SIGINT: stopping; the session stays resumable\]/);
  });

  it('platform: Windows: an agent that does not end on Ctrl+C is terminated after the grace, its command with it (injected platform)', async () => {
    const marker = path.join(root, 'command.pid');
    upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: { command: `echo $$ > ${marker}; sleep 60` } });
    const { host, steps } = windowsStop('ignored');
    const run = await start('1', { processes: host, sigintGraceMs: 300 });
    let commandPid = 0;
    try {
      await waitUntil(() => fs.existsSync(marker) && fs.readFileSync(marker, 'utf8').trim() !== '', 'the command to start', 60_000);
      commandPid = Number(fs.readFileSync(marker, 'utf8').trim());
      assert.ok(commandPid > 0);
      await run.cancel();
      assert.deepEqual(await run.done, { kind: 'cancelled' });
      assert.deepEqual(steps.slice(0, 2), [`ctrl-c ${run.pid}`, `terminate ${run.pid}`], 'Ctrl+C, then the forced stop, the agent first');
      await waitUntil(() => !processAlive(commandPid), 'the command to be stopped with its agent', 5_000);
    } finally {
      if (run.running) await run.cancel(); // a failed wait must not leave the agent running
      if (commandPid > 0 && processAlive(commandPid)) process.kill(commandPid, 'SIGKILL');
    }
  });

  it('platform: Windows: when Ctrl+C cannot be sent (helper failed), the stop is forced at once and the log says so (injected platform; a grace of an hour is never waited)', async () => {
    upstream.setDefaultReply({ kind: 'error', status: 429, code: '3105', retryAfterSeconds: 1 });
    const { host, steps } = windowsStop('fails');
    const run = await start('1', { processes: host, sigintGraceMs: 3_600_000 });
    await upstream.waitForMessageRequest(2);
    await run.interrupt();
    assert.deepEqual(await run.done, { kind: 'interrupted' });
    assert.deepEqual(steps.slice(0, 2), [`ctrl-c ${run.pid}`, `terminate ${run.pid}`]);
    assert.match(fs.readFileSync(run.logFile, 'utf8'), /could not send Ctrl\+C to the agent: stopping it by force/);
  });

  for (const ctrlC of ['delivers', 'fails'] as const) {
    it(`platform: Windows: Ctrl+C typed in the task's terminal goes to the agent's console${ctrlC === 'fails' ? '; where it cannot be sent, the agent is stopped by force instead' : ', and the agent ends on it'} (injected platform)`, async () => {
      upstream.setDefaultReply({ kind: 'error', status: 429, code: '3105', retryAfterSeconds: 1 });
      const { host, steps } = windowsStop(ctrlC);
      const run = await start('1', { processes: host, sigintGraceMs: 60_000 });
      await upstream.waitForMessageRequest(2);
      const pid = run.pid!;
      run.writeInput('\x03');
      const outcome = await run.done;
      assert.equal(outcome.kind, 'failed');
      assert.match((outcome as { reason: string }).reason, /Ctrl\+C/);
      assert.equal(steps[0], `ctrl-c ${pid}`);
      assert.equal(steps.includes(`terminate ${pid}`), ctrlC === 'fails', steps.join(', '));
    });
  }

  it('item 6: a command started by run_command dies when its agent is SIGKILLed', async () => {
    const marker = path.join(root, 'command.pid');
    upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: { command: `echo $$ > ${marker}; sleep 60` } });
    const run = await start('1');
    await waitUntil(() => fs.existsSync(marker) && fs.readFileSync(marker, 'utf8').trim() !== '', 'the command to start');
    const commandPid = Number(fs.readFileSync(marker, 'utf8').trim());
    try {
      assert.equal(processAlive(commandPid), true);
      process.kill(run.pid!, 'SIGKILL'); // no chance for the agent to clean up after itself
      assert.equal((await run.done).kind, 'failed');
      await waitUntil(() => !processAlive(commandPid), 'the command to die with its agent', 5_000);
    } finally {
      if (processAlive(commandPid)) process.kill(commandPid, 'SIGKILL');
    }
  });

  it("item 10: commands that left the agent's process group (setsid, setpgid) are killed when the segment ends (Linux: found by the segment's tag)", async () => {
    const setsidPid = path.join(root, 'setsid.pid');
    const setpgidPid = path.join(root, 'setpgid.pid');
    const detach =
      `setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! > ${setsidPid}; ` +
      `python3 -c "import os; os.setpgid(0, 0); os.execvp('sleep', ['sleep', '301'])" </dev/null >/dev/null 2>&1 & echo $! > ${setpgidPid}`;
    upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: { command: detach } }, { kind: 'text', text: 'Started them.' });
    const run = await start('1');
    const agentGroup = run.pid!;
    assert.equal((await run.done).kind, 'completed');
    const pids = [setsidPid, setpgidPid].map((f) => Number(fs.readFileSync(f, 'utf8').trim()));
    // A SIGKILLed process may stay a zombie until init reaps it: it no longer runs.
    const stillRunning = (pid: number) => {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
      } catch {
        return false; // gone
      }
    };
    try {
      for (const pid of pids) assert.ok(pid > 0 && pid !== agentGroup);
      await waitUntil(() => pids.every((pid) => !stillRunning(pid)), 'the detached commands to be killed', 5_000);
    } finally {
      for (const pid of pids) if (processAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('item 6: a command that outlives its time limit is killed with its children, and the agent goes on', async () => {
    const marker = path.join(root, 'grandchild.pid');
    upstream.enqueue(
      { kind: 'tool_use', name: 'run_command', input: { command: `sleep 60 & echo $! > ${marker}; wait`, timeout_ms: 1_000 } },
      { kind: 'text', text: 'gave up on the command' },
    );
    const run = await start('1');
    const outcome = await run.done;
    assert.deepEqual(outcome, { kind: 'completed', summary: 'gave up on the command', exitCode: 0 });
    const grandchild = Number(fs.readFileSync(marker, 'utf8').trim());
    await waitUntil(() => !processAlive(grandchild), "the command's child to be gone", 5_000);
    const toolResult = JSON.stringify(upstream.messageRequests()[1].body);
    assert.match(toolResult, /timed out after 1000 ms/);
  });

  /** A default-mode segment whose asks go to a real AskBroker (as the runtime binds it to the task). */
  async function startAsking(name: string) {
    const broker = new AskBroker({ clock: systemClock, timeoutMs: () => 60_000 });
    const events: AskEvent[] = [];
    broker.onEvent((e) => events.push(e));
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
    const answers = () => events.flatMap((e) => (e.type === 'answered' ? [[e.decision, e.by]] : []));
    return { run, broker, seen, answers };
  }

  /** As startAsking, then waits until the agent's question is pending at the host. */
  async function untilAsked(name: string) {
    const started = await startAsking(name);
    await waitUntil(() => started.broker.pending('t').length === 1, 'the pending ask');
    return { ...started, ask: started.broker.pending('t')[0] };
  }

  it('a permission ask is pending at the host; a typed answer is echoed in the terminal and applied', async () => {
    upstream.enqueue({ kind: 'tool_use', name: 'write_file', input: { path: 'asked.txt', content: 'ok' } }, { kind: 'text', text: 'done' });
    const { run, broker, seen, answers, ask } = await untilAsked('ask');
    assert.equal(ask.tool, 'write_file');
    assert.match(ask.summary, /asked\.txt/);
    await waitUntil(() => /\[y\/N\]/.test(seen.join('')), 'the question in the terminal');
    // Keys one at a time, as a pseudoterminal forwards them; a typo corrected with Backspace.
    for (const key of ['x', '\x7f', 'y', '\r']) run.writeInput(key);
    assert.equal((await run.done).kind, 'completed');
    assert.equal(fs.readFileSync(path.join(workspace, 'asked.txt'), 'utf8'), 'ok');
    // eslint-disable-next-line no-control-regex -- the echo of Backspace is the point
    const echoed = /\[y\/N\] \(denied automatically in 60 s; type y or n, then Enter\) x\x08 \x08y\n {4}→ allowed\n/;
    assert.match(seen.join(''), echoed, `the typed answer was echoed: ${JSON.stringify(seen.join(''))}`);
    assert.deepEqual(answers(), [['allow', 'terminal']]);
    assert.deepEqual(broker.pending(), []);
  });

  it('keys typed before the question do not answer it (no stale "y" or Enter)', async () => {
    upstream.enqueue(
      { kind: 'tool_use', name: 'list_files', input: {} },
      { kind: 'tool_use', name: 'write_file', input: { path: 'late.txt', content: 'ok' } },
      { kind: 'text', text: 'done' },
    );
    const { run, broker } = await startAsking('stale');
    // Typed while the agent works and asks nothing: an Enter and a "n" that must not answer the question.
    run.writeInput('n\r');
    await waitUntil(() => broker.pending('t').length === 1, 'the pending ask');
    // Give the stale keys every chance to be taken as the answer before the real one.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(broker.pending('t').length, 1, 'still pending: the earlier keys did not answer it');
    run.writeInput('y\r');
    assert.equal((await run.done).kind, 'completed');
    assert.equal(fs.readFileSync(path.join(workspace, 'late.txt'), 'utf8'), 'ok');
  });

  it('the host answers Allow: the tool runs; a later answer (typed or from the host) is ignored', async () => {
    upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: { command: 'echo ran > ran.txt' } }, { kind: 'text', text: 'done' });
    const { run, broker, seen, answers, ask } = await untilAsked('host-allow');
    assert.equal(broker.answer('t', ask.id, 'allow', ask.inputDigest), 'accepted');
    assert.equal(broker.answer('t', ask.id, 'deny', ask.inputDigest), 'already-answered');
    run.writeInput('n\r');
    assert.equal((await run.done).kind, 'completed');
    assert.equal(fs.readFileSync(path.join(workspace, 'ran.txt'), 'utf8').trim(), 'ran');
    assert.match(seen.join(''), /→ allowed \(answered outside this terminal\)/);
    assert.deepEqual(answers(), [['allow', 'host']]);
  });

  it('the host answers Deny: the tool does not run and the model is told it was denied', async () => {
    upstream.enqueue({ kind: 'tool_use', name: 'run_command', input: { command: 'echo ran > ran.txt' } }, { kind: 'text', text: 'done' });
    const { run, broker, ask } = await untilAsked('host-deny');
    assert.equal(broker.answer('t', ask.id, 'deny', ask.inputDigest), 'accepted');
    assert.equal((await run.done).kind, 'completed');
    assert.equal(fs.existsSync(path.join(workspace, 'ran.txt')), false);
    assert.match(JSON.stringify(upstream.messageRequests()[1].body), /Not allowed: the user denied it/);
  });

  it('item 4: Ctrl+C in the terminal interrupts the reference agent while it waits for an answer', async () => {
    upstream.enqueue({ kind: 'tool_use', name: 'write_file', input: { path: 'never.txt', content: 'no' } });
    const { run, broker } = await untilAsked('ctrl-c');
    run.writeInput('\x03');
    const outcome = await run.done;
    assert.equal(outcome.kind, 'failed');
    assert.match((outcome as { reason: string }).reason, /Ctrl\+C/);
    assert.equal(fs.existsSync(path.join(workspace, 'never.txt')), false);
    assert.deepEqual(broker.pending(), [], 'the ended segment closed its ask');
  });

  it('fails with a readable reason when the agent gives up, and refuses to start a missing agent', async () => {
    upstream.setDefaultReply({ kind: 'error', status: 401, message: 'bad key' });
    const run = await start('1');
    const outcome = await run.done;
    assert.equal(outcome.kind, 'failed');
    assert.match((outcome as { reason: string }).reason, /401.*bad key/);
    const missing = new ReferenceAgentAdapter({ command: path.join(root, 'no-such-node'), argsPrefix: [], sessionsDir: root });
    await assert.rejects(
      SegmentRun.start({
        adapter: missing,
        spec: {
          taskId: 't',
          sessionId: 's',
          resume: false,
          prompt: 'p',
          permissionMode: 'plan',
          model: null,
          thoughtLevel: null,
          workspacePath: workspace,
        },
        gateway: { anthropicBaseUrl: upstream.url, apiKey: 'k' },
        ticketId: 'T',
        segmentDir: path.join(root, 'segments', 'missing'),
      }),
      /could not start the reference agent/,
    );
  });

  it('a working folder that does not exist is named as the cause, not the agent program (spawn reports ENOENT for both)', async () => {
    fs.rmSync(workspace, { recursive: true });
    await assert.rejects(start('gone'), (err: Error) => {
      assert.match(err.message, /the folder it works in, .*ws, does not exist/);
      assert.doesNotMatch(err.message, /ENOENT/);
      return true;
    });
  });
});
