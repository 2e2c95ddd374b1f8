// The demo of `npm start` end to end in Node: the gateway launched as `--demo` launches it (its
// built-in DEMO model as the upstream, demo pacing shortened for the test), the real task
// store/service/scheduler/runtime, and the real reference agent process driving its tools.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RuntimeEvent } from '../../src/agent/runtime/task-runtime';
import { systemClock } from '../../src/core/clock';
import { isTerminalStatus } from '../../src/core/types';
import { resolveGatewayConfig } from '../../src/gateway/config';
import { launchGateway, type LaunchedGateway } from '../../src/gateway/launch';
import { silentLogger } from '../../src/gateway/http/logger';
import { makeGitWorkspace } from './gateway-fixture';
import { engineDirs, type HostEngine } from '../../src/engine/host-engine';
import { startTestEngine, waitFor } from './test-engine';

describe('demo gateway end to end (DEMO model driving the real reference agent)', function () {
  let root: string;
  let launched: LaunchedGateway | undefined;
  let host: HostEngine | undefined;

  beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-demo-e2e-'))));
  afterEach(async () => {
    await host?.dispose();
    host = undefined;
    await launched?.close(0);
    launched = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('a demo task waits in the queue and for admission, its short segment ends (3102), the same session resumes, and it completes with files changed', async () => {
    // The human pacing (15 s queue, 10 s admission, 25 s segments, 5 s per reply), shortened.
    const config = resolveGatewayConfig({
      demo: true,
      port: 0,
      logLevel: 'silent',
      queueHoldMs: 300,
      admissionHoldMs: 1_000,
      activeWindowMs: 4_000,
      demoStepMs: 250,
      promoteIntervalMs: 100,
    });
    assert.equal(config.demoScript, 'work');
    launched = await launchGateway(config, { clock: systemClock, log: silentLogger });
    assert.ok(launched.demoModelUrl, 'the DEMO model is the upstream');

    const events: RuntimeEvent[] = [];
    host = await startTestEngine({
      storageDir: path.join(root, 'globalStorage'),
      gatewayUrl: launched.gateway.url,
      apiKey: config.demoKey,
      agent: 'reference',
      onEvent: (e) => events.push(e),
    });
    const h = host;
    await waitFor(() => h.service.isLeader, 'the lease');
    const ws = makeGitWorkspace(root);
    const created = await h.service.create({
      title: 'demo',
      prompt: 'Create hello.txt with a greeting.',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
    });
    assert.equal(h.service.getTask(created.id)!.status, 'queued', 'queued first: the ticket waits in the queue');

    const done = await waitFor(
      () => {
        const t = h.service.getTask(created.id)!;
        return isTerminalStatus(t.status) ? t : undefined;
      },
      'the demo task to finish',
      120_000,
    );
    assert.equal(done.status, 'completed', done.failureReason ?? '');

    const ofTask = events.filter((e) => e.taskId === created.id);
    const started = ofTask.filter((e): e is Extract<RuntimeEvent, { type: 'segment-started' }> => e.type === 'segment-started');
    assert.deepEqual(
      started.map((e) => e.resume),
      [false, true],
      'two segments: a new session, then a resume',
    );
    assert.equal(started[0].sessionId, started[1].sessionId, 'the same session');
    const heldTickets = new Set(
      ofTask.filter((e) => e.type === 'holding').map((e) => (e as Extract<RuntimeEvent, { type: 'holding' }>).ticketId),
    );
    assert.equal(heldTickets.size, 2, 'in each segment the agent waited for admission (3105 held by the local proxy)');
    const ended = ofTask.filter((e): e is Extract<RuntimeEvent, { type: 'segment-ended' }> => e.type === 'segment-ended');
    assert.deepEqual(
      ended.map((e) => e.outcome.kind),
      ['segment-expired', 'completed'],
    );
    assert.deepEqual(
      h.service.ticketsOf(created.id).map((t) => t.endReason),
      ['expired', 'completed'],
    );

    assert.ok((done.filesChanged ?? 0) > 0, `files changed: ${done.filesChanged}`);
    const written = fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8');
    assert.match(written, /DEMO MODEL/, 'the file says it was written in the demo');
    assert.match(written, /node --version said: v\d+\.\d+\.\d+/, 'the harmless command ran and its output was used');
    assert.deepEqual(
      fs.readdirSync(engineDirs(path.join(root, 'globalStorage')).referenceSessionsDir),
      [`${done.sessionId}.jsonl`],
      'one session file',
    );
  });

  it('asking mode: its command and its write park, each is allowed while parked, and after each resume the DEMO model makes the allowed call again: each runs once and the task completes with the file', async () => {
    // A long segment, so the questions park before it ends; a short park.
    const config = resolveGatewayConfig({
      demo: true,
      port: 0,
      logLevel: 'silent',
      queueHoldMs: 300,
      admissionHoldMs: 500,
      activeWindowMs: 60_000,
      demoStepMs: 250,
      promoteIntervalMs: 100,
    });
    launched = await launchGateway(config, { clock: systemClock, log: silentLogger });
    host = await startTestEngine({
      storageDir: path.join(root, 'globalStorage'),
      gatewayUrl: launched.gateway.url,
      apiKey: config.demoKey,
      agent: 'reference',
      unansweredQuestion: 'park',
      askParkMs: 1_000,
    });
    const h = host;
    await waitFor(() => h.service.isLeader, 'the lease');
    const ws = makeGitWorkspace(root);
    const { id } = await h.service.create({
      title: 'demo asks',
      prompt: 'Create hello.txt with a greeting.',
      permissionMode: 'default',
      workspacePath: ws,
    });

    // The user answers each question only once the task parked on it (Allow from the card, as in the morning).
    const answers: Promise<string>[] = [];
    const answered = new Set<string>();
    const done = await waitFor(
      () => {
        for (const ask of h.questions.pendingAsks(id).filter((a) => a.parkedAt !== undefined && !answered.has(a.id))) {
          answered.add(ask.id);
          answers.push(h.questions.answerAsk(id, ask.id, 'allow', ask.inputDigest));
        }
        const t = h.service.getTask(id)!;
        return isTerminalStatus(t.status) ? t : undefined;
      },
      'the demo task to finish',
      120_000,
    );
    assert.deepEqual(await Promise.all(answers), ['accepted', 'accepted']);
    assert.equal(done.status, 'completed', done.failureReason ?? '');

    const questions = h.store.read((tx) => tx.questions.forTask(id));
    assert.deepEqual(
      questions.map((q) => [q.tool, q.decision, q.answeredBy, q.parkedAt !== null]),
      [
        ['run_command', 'allow', 'host', true],
        ['run_command', 'allow', 'stored', false],
        ['write_file', 'allow', 'host', true],
        ['write_file', 'allow', 'stored', false],
      ],
      'each parked call was allowed and made again after the resume, answered from the stored decision',
    );
    assert.deepEqual(
      h.service.ticketsOf(id).map((t) => t.endReason),
      ['parked', 'parked', 'completed'],
    );
    const written = fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8');
    assert.match(written, /node --version said: v\d+\.\d+\.\d+/, 'the allowed command ran and its output was used');
    // Once each: the session holds one successful result of each allowed call.
    const session = fs.readFileSync(
      path.join(engineDirs(path.join(root, 'globalStorage')).referenceSessionsDir, `${done.sessionId}.jsonl`),
      'utf8',
    );
    const ran = (tool: string) => {
      const lines = session
        .split('\n')
        .filter(Boolean)
        .map(
          (l) =>
            JSON.parse(l) as {
              message?: { content?: { type: string; id?: string; name?: string; tool_use_id?: string; is_error?: boolean }[] };
            },
        );
      const blocks = lines.flatMap((l) => l.message?.content ?? []);
      const ids = new Set(blocks.filter((b) => b.type === 'tool_use' && b.name === tool).map((b) => b.id));
      return blocks.filter((b) => b.type === 'tool_result' && ids.has(b.tool_use_id) && !b.is_error).length;
    };
    assert.equal(ran('run_command'), 1, 'the command ran once');
    assert.equal(ran('write_file'), 1, 'the file was written once');
  });
});
