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
import { silentLogger } from '../../src/gateway/logger';
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
    const config = resolveGatewayConfig({ demo: true, port: 0, logLevel: 'silent', queueHoldMs: 300, admissionHoldMs: 1_000, activeWindowMs: 4_000, demoStepMs: 250, promoteIntervalMs: 100 });
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
    const created = await h.service.create({ title: 'demo', prompt: 'Create hello.txt with a greeting.', permissionMode: 'bypassPermissions', workspacePath: ws });
    assert.equal(h.service.getTask(created.id)!.status, 'queued', 'queued first: the ticket waits in the queue');

    const done = await waitFor(() => {
      const t = h.service.getTask(created.id)!;
      return isTerminalStatus(t.status) ? t : undefined;
    }, 'the demo task to finish', 120_000);
    assert.equal(done.status, 'completed', done.failureReason ?? '');

    const ofTask = events.filter((e) => e.taskId === created.id);
    const started = ofTask.filter((e): e is Extract<RuntimeEvent, { type: 'segment-started' }> => e.type === 'segment-started');
    assert.deepEqual(started.map((e) => e.resume), [false, true], 'two segments: a new session, then a resume');
    assert.equal(started[0].sessionId, started[1].sessionId, 'the same session');
    const heldTickets = new Set(ofTask.filter((e) => e.type === 'holding').map((e) => (e as Extract<RuntimeEvent, { type: 'holding' }>).ticketId));
    assert.equal(heldTickets.size, 2, 'in each segment the agent waited for admission (3105 held by the local proxy)');
    const ended = ofTask.filter((e): e is Extract<RuntimeEvent, { type: 'segment-ended' }> => e.type === 'segment-ended');
    assert.deepEqual(ended.map((e) => e.outcome.kind), ['segment-expired', 'completed']);
    assert.deepEqual(h.service.ticketsOf(created.id).map((t) => t.endReason), ['expired', 'completed']);

    assert.ok((done.filesChanged ?? 0) > 0, `files changed: ${done.filesChanged}`);
    const written = fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8');
    assert.match(written, /DEMO MODEL/, 'the file says it was written in the demo');
    assert.match(written, /node --version said: v\d+\.\d+\.\d+/, 'the harmless command ran and its output was used');
    assert.deepEqual(fs.readdirSync(engineDirs(path.join(root, 'globalStorage')).referenceSessionsDir), [`${done.sessionId}.jsonl`], 'one session file');
  });
});
