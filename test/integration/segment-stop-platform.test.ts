// A segment's graceful stop under this platform's own rules, with the real reference agent and
// the real ticket proxy in front of the scripted fake upstream (standing in for the gateway's
// model route). In the Windows lane (.ci/windows-lane.sh) the stop's first step is the real
// Ctrl+C to the agent's console, sent by ctrlc-windows' helper; on POSIX it is SIGINT.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ReferenceAgentAdapter } from '../../src/agent/runtime/reference-agent-adapter';
import { SegmentRun } from '../../src/agent/runtime/segment-runner';
import { systemProcessHost, type ProcessHost } from '../../src/core/process-control';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';
import { referenceAgentArgv } from '../support/source-bundle';

describe("platform: a segment's graceful stop (real reference agent, this platform's own rules)", () => {
  let upstream: FakeAnthropicUpstream;
  let root: string;

  beforeEach(async () => {
    upstream = await FakeAnthropicUpstream.start();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'seg-stop-'));
    fs.mkdirSync(path.join(root, 'ws'));
  });
  afterEach(async () => {
    await upstream.close();
    fs.rmSync(root, { recursive: true, force: true, maxRetries: 10 });
  });

  it("platform: the host going away reaches the reference agent's own handler first (POSIX SIGINT; Windows Ctrl+C to its console): it ends resumably and is never terminated", async () => {
    upstream.setDefaultReply({ kind: 'error', status: 429, code: '3105', retryAfterSeconds: 1 });
    const real = systemProcessHost();
    const forced: string[] = [];
    // This platform's own host; only the forced stop's signals (SIGKILL = TerminateProcess on Windows) are noted.
    const processes: ProcessHost = {
      ...real,
      kill: (pid, signal) => {
        if (signal === 'SIGKILL' || signal === 'SIGTERM') forced.push(`${signal} ${pid}`);
        real.kill(pid, signal);
      },
    };
    const run = await SegmentRun.start({
      adapter: new ReferenceAgentAdapter({
        command: process.execPath,
        argsPrefix: referenceAgentArgv(),
        sessionsDir: path.join(root, 'sessions'),
        env: { OFFPEAK_AGENT_RETRY_BASE_MS: '20' },
      }),
      spec: {
        taskId: 'task-1',
        sessionId: 'sess-1',
        resume: false,
        prompt: 'do the task',
        permissionMode: 'bypassPermissions',
        model: 'fake-model',
        thoughtLevel: null,
        workspacePath: path.join(root, 'ws'),
      },
      gateway: { anthropicBaseUrl: `${upstream.url}/api/anthropic`, apiKey: 'user-key' },
      ticketId: 'T-1',
      segmentDir: path.join(root, 'segments', '1'),
      proxyTimings: { holdDefaultMs: 30, holdMaxMs: 30 },
      // Long enough that only an agent that heard the graceful step ends before it.
      stopTimings: { sigintGraceMs: 60_000, sigtermGraceMs: 60_000 },
      processes,
    });
    await upstream.waitForMessageRequest(2, 120_000);
    const pid = run.pid!;
    await run.interrupt();
    assert.deepEqual(await run.done, { kind: 'interrupted' });
    assert.match(fs.readFileSync(run.logFile, 'utf8'), /\[SIGINT: stopping; the session stays resumable\]/);
    assert.ok(
      !forced.includes(`SIGKILL ${pid}`) && !forced.includes(`SIGTERM ${pid}`),
      `the agent was not stopped by force: ${forced.join(', ')}`,
    );
  });
});
