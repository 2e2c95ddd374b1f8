// Personal mode (issue 21 items 1 and 3; docs/architecture.md#personal-mode): windows on one
// machine share ONE local authority (the reference gateway's ticket rules, in the extension host
// of the window that started it, its tickets in a sql.js file under globalStorage/personal/);
// closing that window hands it over to another with nothing lost; an agent's own login passes
// through to the model API untouched and is written nowhere. Real parts: window processes
// (host-process.ts) and an in-process window, the real gateway code on loopback, the real sql.js
// file, the real reference agent. The model API is the scripted fixture (test/fixtures).
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { HostEngine } from '../../src/engine/host-engine';
import { authorityPaths, readDiscovery } from '../../src/personal/authority-files';
import type { LocalAuthority } from '../../src/personal/local-authority';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';
import { makeGitWorkspace, processAlive } from './gateway-fixture';
import { spawnHost, type HostLine } from './spawn-host';
import { startPersonalTestEngine, waitFor, type PersonalTestOptions } from './test-engine';

const FAKE_LOGIN = 'sk-ant-oat01-FAKE-personal-login-token-0123456789abcdefABCDEF';

/** Every file under `root` (no links followed). */
function filesUnder(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) out.push(full);
    }
  };
  walk(root);
  return out;
}

/** The pids of `pid`'s descendants now (Linux /proc). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const pending = [pid];
  while (pending.length > 0) {
    const parent = pending.pop()!;
    for (const [child, ppid] of parents) {
      if (ppid !== parent) continue;
      found.push(child);
      pending.push(child);
    }
  }
  return found;
}

describe('personal mode: one local authority for all windows (real processes end to end)', function () {
  this.timeout(180_000);
  let root: string;
  let storageDir: string;
  let upstream: FakeAnthropicUpstream;
  const children: ChildProcess[] = [];
  const inProcess: { engine: HostEngine; authority: LocalAuthority }[] = [];

  beforeEach(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-personal-'));
    storageDir = path.join(root, 'globalStorage');
    upstream = await FakeAnthropicUpstream.start();
  });

  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const w of inProcess.splice(0)) {
      await w.engine.dispose();
      await w.authority.dispose();
    }
    await upstream.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  function personal(over: Partial<PersonalTestOptions> = {}): PersonalTestOptions {
    return { upstreamUrl: upstream.url, modelApiKey: 'sk-ant-api03-model-key-of-the-test', gateway: { segmentCapacity: 1 }, ...over };
  }

  function window(
    windowId: string,
    workspaces: string[],
    over: Partial<PersonalTestOptions> = {},
    env: Record<string, string> = {},
  ): { child: ChildProcess; lines: HostLine[]; exited: Promise<number | null> } {
    const w = spawnHost({ storageDir, agent: 'reference', windowId, workspaceKeys: workspaces, personal: personal(over) }, env);
    children.push(w.child);
    return w;
  }

  async function inProcessWindow(windowId: string, workspaces: string[]): Promise<HostEngine> {
    const w = await startPersonalTestEngine({ storageDir, agent: 'reference', windowId, workspaceKeys: workspaces, personal: personal() });
    inProcess.push(w);
    return w.engine;
  }

  const finished = (engine: HostEngine, id: string) => () => {
    const t = engine.service.getTask(id);
    return t && ['completed', 'failed', 'cancelled'].includes(t.status) ? t : undefined;
  };

  it("two windows share one local authority: one listener (the first window), both windows' tasks admitted FIFO by it, the model key added upstream", async () => {
    const wsA = makeGitWorkspace(root, 'wsA');
    const wsB = makeGitWorkspace(root, 'wsB');
    const a = window('window-A', [wsA]);
    const aAuthority = await waitFor(() => a.lines.find((l) => l.authority)?.authority, 'window A to find its authority');
    const b = window('window-B', [wsB]);
    const bAuthority = await waitFor(() => b.lines.find((l) => l.authority)?.authority, 'window B to find its authority');
    assert.equal(aAuthority.serving, true, 'the first window runs the authority');
    assert.equal(bAuthority.serving, false, 'the second follows it');
    assert.equal(bAuthority.socketPath, aAuthority.socketPath, 'one authority, one channel');
    assert.equal(readDiscovery(authorityPaths(storageDir))?.pid, a.child.pid, 'authority.json names the first window');

    const c = await inProcessWindow('window-C', []);
    await waitFor(() => c.windows.remoteHosts().length >= 2 || undefined, 'both windows to register');
    upstream.enqueue({ kind: 'text', text: 'A done.', delayMs: 500 }, { kind: 'text', text: 'B done.' });
    await c.service.availability.refresh();
    const first = await c.service.create({
      title: 'in A',
      prompt: 'work in A',
      permissionMode: 'bypassPermissions',
      workspacePath: wsA,
      isolation: 'inPlace',
    });
    const second = await c.service.create({
      title: 'in B',
      prompt: 'work in B',
      permissionMode: 'bypassPermissions',
      workspacePath: wsB,
      isolation: 'inPlace',
    });
    const doneA = await waitFor(finished(c, first.id), 'the first task');
    const doneB = await waitFor(finished(c, second.id), 'the second task');
    assert.equal(doneA.status, 'completed', doneA.failureReason ?? '');
    assert.equal(doneB.status, 'completed', doneB.failureReason ?? '');
    assert.ok(
      a.lines.some((l) => l.event?.type === 'segment-started' && l.event.taskId === first.id),
      'window A ran its task',
    );
    assert.ok(
      b.lines.some((l) => l.event?.type === 'segment-started' && l.event.taskId === second.id),
      'window B ran its task',
    );
    // FIFO with one segment at a time: the second task's model call came after the first's.
    const requests = upstream.messageRequests();
    assert.equal(requests.length, 2);
    assert.match(JSON.stringify(requests[0].body), /work in A/);
    assert.match(JSON.stringify(requests[1].body), /work in B/);
    for (const r of requests) {
      assert.equal(r.headers['x-api-key'], 'sk-ant-api03-model-key-of-the-test', 'the model key from SecretStorage goes upstream');
      assert.equal(r.headers['x-offpeak-key'], undefined, 'the local key stays on the machine');
    }
  });

  it('closing the window that runs the authority hands it over: a running and a queued task complete in the same session, no step run twice, one History row each', async () => {
    const wsA = makeGitWorkspace(root, 'wsA');
    const wsB = makeGitWorkspace(root, 'wsB');
    const wsC = makeGitWorkspace(root, 'wsC');
    const a = window('window-A', [wsA]);
    await waitFor(() => a.lines.find((l) => l.authority?.serving), 'window A to run the authority');
    const b = window('window-B', [wsB]);
    await waitFor(() => b.lines.find((l) => l.authority), 'window B to follow');
    const c = await inProcessWindow('window-C', [wsC]);
    await waitFor(() => c.windows.remoteHosts().length >= 2 || undefined, 'both windows to register');

    upstream.enqueue(
      { kind: 'tool_use', name: 'run_command', input: { command: 'echo step >> steps.txt; sleep 4' } },
      { kind: 'text', text: 'Finished after the hand-over.' },
      { kind: 'text', text: 'The queued one finished too.' },
    );
    await c.service.availability.refresh();
    const running = await c.service.create({
      title: 'running',
      prompt: 'long work',
      permissionMode: 'bypassPermissions',
      workspacePath: wsB,
      isolation: 'inPlace',
    });
    const queued = await c.service.create({
      title: 'queued',
      prompt: 'queued work',
      permissionMode: 'bypassPermissions',
      workspacePath: wsC,
      isolation: 'inPlace',
    });
    const started = await waitFor(
      () => b.lines.find((l) => l.event?.type === 'segment-started' && l.event.taskId === running.id)?.event,
      'the segment in window B',
    );
    await waitFor(() => fs.existsSync(path.join(wsB, 'steps.txt')), 'the command to run');
    assert.equal(c.service.getTask(queued.id)!.status, 'queued', 'the second task waits for the one segment');

    // Close the window running the authority (SIGTERM: the window's clean shutdown).
    a.child.kill('SIGTERM');
    await a.exited;
    await waitFor(
      () => b.lines.some((l) => l.serving?.takeover) || inProcess[0].authority.serving || undefined,
      'another window to take the authority over',
      20_000,
    );

    const doneRunning = await waitFor(finished(c, running.id), 'the running task');
    const doneQueued = await waitFor(finished(c, queued.id), 'the queued task');
    assert.equal(doneRunning.status, 'completed', doneRunning.failureReason ?? '');
    assert.equal(doneQueued.status, 'completed', doneQueued.failureReason ?? '');
    assert.equal(doneRunning.sessionId, started.sessionId, 'the same session');
    assert.equal(
      b.lines.filter((l) => l.event?.type === 'segment-started' && l.event.taskId === running.id).length,
      1,
      'one segment: held through the hand-over, not restarted',
    );
    assert.equal(fs.readFileSync(path.join(wsB, 'steps.txt'), 'utf8'), 'step\n', 'no step run twice');
    assert.equal(upstream.messageRequests().length, 3);
    for (const id of [running.id, queued.id]) assert.equal(c.service.history().filter((h) => h.taskId === id).length, 1, 'one History row');
    assert.equal(c.service.ticketsOf(running.id).length, 1, 'the ticket survived the hand-over (same id)');
  });

  it("an agent's own login (a fake sk-ant-oat01 token) reaches the model API unchanged and appears in no file, log line or argv", async () => {
    const ws = makeGitWorkspace(root, 'ws');
    // No model key at all: only the agent's own login can reach the model.
    const a = window('window-A', [ws], { modelApiKey: undefined, referenceOwnLogin: true }, { OFFPEAK_TEST_AGENT_TOKEN: FAKE_LOGIN });
    await waitFor(() => a.lines.find((l) => l.ready), 'window A');
    const stderr: string[] = [];
    a.child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    const c = await inProcessWindow('window-C', []);
    upstream.enqueue(
      { kind: 'tool_use', name: 'run_command', input: { command: 'sleep 2; echo ok > ok.txt' } },
      { kind: 'text', text: 'Done with my own login.' },
    );
    await c.service.availability.refresh();
    const task = await c.service.create({
      title: 'login',
      prompt: 'use my login',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
      isolation: 'inPlace',
    });
    await waitFor(() => a.lines.find((l) => l.event?.type === 'segment-started' && l.event.taskId === task.id), 'the segment');
    await waitFor(() => upstream.messageRequests().length >= 1 || undefined, 'the first model call');
    // While the agent runs: no spawned process of the window carries the token in its argv.
    const pids = [a.child.pid!, ...descendants(a.child.pid!)];
    assert.ok(pids.length >= 2, 'the window has its agent running');
    for (const pid of pids) {
      if (!processAlive(pid)) continue;
      let cmdline = '';
      try {
        cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        continue;
      }
      assert.ok(!cmdline.includes(FAKE_LOGIN) && !cmdline.includes('oat01'), `argv of pid ${pid} carries no login`);
    }
    const done = await waitFor(finished(c, task.id), 'the task');
    assert.equal(done.status, 'completed', done.failureReason ?? '');

    const requests = upstream.messageRequests();
    assert.equal(requests.length, 2);
    for (const r of requests) {
      assert.equal(r.headers.authorization, `Bearer ${FAKE_LOGIN}`, 'the login reached the model API unchanged');
      assert.equal(r.headers['x-api-key'], undefined, 'no key of ours was added');
      assert.equal(r.headers['x-offpeak-key'], undefined, 'the local key stays on the machine');
    }
    for (const file of filesUnder(root)) {
      let bytes: Buffer;
      try {
        bytes = fs.readFileSync(file);
      } catch {
        continue; // a temp file renamed into place meanwhile (its content is the file read next time)
      }
      assert.ok(!bytes.includes(FAKE_LOGIN), `${path.relative(root, file)} holds no login`);
    }
    const scanned = filesUnder(root).map((f) => path.relative(root, f));
    assert.ok(
      scanned.some((f) => f.endsWith('agent.log')) && scanned.some((f) => f.endsWith('tasks-index.sqlite')),
      'the scan saw the segment log and the task database',
    );
    const output = [...a.lines.map((l) => JSON.stringify(l)), ...stderr].join('\n');
    assert.ok(!output.includes(FAKE_LOGIN), 'no log line carries the login');
  });
});

describe('personal mode without a model credential (real processes end to end)', function () {
  this.timeout(180_000);

  it('the reference agent (no login of its own) with no model API key set: the task fails saying to set the model API key, and nothing reached the model API', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-personal-nokey-'));
    const upstream = await FakeAnthropicUpstream.start();
    const w = await startPersonalTestEngine({
      storageDir: path.join(root, 'globalStorage'),
      agent: 'reference',
      windowId: 'window-A',
      workspaceKeys: [],
      personal: { upstreamUrl: upstream.url },
    });
    try {
      const ws = makeGitWorkspace(root, 'ws');
      await w.engine.service.availability.refresh();
      const task = await w.engine.service.create({
        title: 'no key',
        prompt: 'anything',
        permissionMode: 'bypassPermissions',
        workspacePath: ws,
        isolation: 'inPlace',
      });
      const done = await waitFor(() => {
        const t = w.engine.service.getTask(task.id);
        return t && ['completed', 'failed', 'cancelled'].includes(t.status) ? t : undefined;
      }, 'the task to end');
      assert.equal(done.status, 'failed');
      assert.match(done.failureReason ?? '', /No model API key is set.*Set Model API Key/);
      assert.equal(upstream.messageRequests().length, 0);
    } finally {
      await w.engine.dispose();
      await w.authority.dispose();
      await upstream.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
