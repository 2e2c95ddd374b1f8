// Personal mode on a machine other users share (issue 28 item 1; docs/architecture.md#personal-mode):
// the windows reach the local authority over a channel only this user can open, so a listener of
// another local user, trying again and again to listen where the authority listened, receives
// nothing (no local key, no Claude login) while the window running the authority crashes or closes,
// and the running task goes on in the same session. Real parts: window processes (host-process.ts),
// an in-process window, the real gateway code, the real reference agent with its own login. The
// other user's listener and the model API are fixtures (test/fixtures): the listener runs as uid
// 65534 through setpriv when the test runs as root, else as this user (a stand-in; see asOtherUser).
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { HostEngine } from '../../src/engine/host-engine';
import { authorityPaths } from '../../src/personal/authority-files';
import type { LocalAuthority } from '../../src/personal/local-authority';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';
import { startOtherUserListener, type OtherUserListener } from '../fixtures/other-user-listener';
import { makeGitWorkspace } from './gateway-fixture';
import { spawnHost } from './spawn-host';
import { startPersonalTestEngine, waitFor } from './test-engine';

const FAKE_LOGIN = 'sk-ant-oat01-FAKE-shared-machine-login-0123456789abcdefABCDEF';

describe('personal mode on a shared machine: credentials go only to listeners proven ours (real processes end to end)', function () {
  this.timeout(180_000);
  let root: string;
  let storageDir: string;
  let upstream: FakeAnthropicUpstream;
  let listener: OtherUserListener | undefined;
  const children: ChildProcess[] = [];
  const inProcess: { engine: HostEngine; authority: LocalAuthority }[] = [];

  beforeEach(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-shared-'));
    storageDir = path.join(root, 'globalStorage');
    fs.mkdirSync(storageDir);
    // Only personal/ itself (0700) keeps the other user out, not a private temp folder around it.
    fs.chmodSync(root, 0o755);
    fs.chmodSync(storageDir, 0o755);
    upstream = await FakeAnthropicUpstream.start();
  });

  afterEach(async () => {
    listener?.stop();
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const w of inProcess.splice(0)) {
      await w.engine.dispose();
      await w.authority.dispose();
    }
    await upstream.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  for (const [how, signal] of [
    ['crashes (SIGKILL)', 'SIGKILL'],
    ['closes cleanly (SIGTERM)', 'SIGTERM'],
  ] as const) {
    it(`item 1: while the window running the authority ${how}, a listener of another local user at the authority's old address receives no request, so no credential; the task goes on in the same session`, async () => {
      const wsB = makeGitWorkspace(root, 'wsB');
      const personal = { upstreamUrl: upstream.url, gateway: { segmentCapacity: 1 } };
      const a = spawnHost({ storageDir, agent: 'reference', windowId: 'window-A', workspaceKeys: [], personal });
      children.push(a.child);
      await waitFor(() => a.lines.find((l) => l.authority?.serving), 'window A to run the authority');
      const b = spawnHost(
        { storageDir, agent: 'reference', windowId: 'window-B', workspaceKeys: [wsB], personal: { ...personal, referenceOwnLogin: true } },
        { OFFPEAK_TEST_AGENT_TOKEN: FAKE_LOGIN },
      );
      children.push(b.child);
      await waitFor(() => b.lines.find((l) => l.ready), 'window B');
      const c = await startPersonalTestEngine({ storageDir, agent: 'reference', windowId: 'window-C', workspaceKeys: [], personal });
      inProcess.push(c);

      // Where the authority listens, as its discovery file names it: the other user tries it from now on.
      const discovery = JSON.parse(fs.readFileSync(authorityPaths(storageDir).discovery, 'utf8')) as { port?: number; address?: string };
      listener = startOtherUserListener(discovery.port !== undefined ? { port: discovery.port } : { path: discovery.address! });
      await waitFor(
        () => listener!.refusals().length > 0 || undefined,
        'the other user to try the address (refused while the authority holds it)',
      );

      upstream.enqueue(
        { kind: 'tool_use', name: 'run_command', input: { command: 'echo step >> steps.txt; sleep 3' } },
        { kind: 'text', text: 'Done after the hand-over.' },
      );
      await c.engine.service.availability.refresh();
      const task = await c.engine.service.create({
        title: 'login',
        prompt: 'use my login',
        permissionMode: 'bypassPermissions',
        workspacePath: wsB,
        isolation: 'inPlace',
      });
      const started = await waitFor(
        () => b.lines.find((l) => l.event?.type === 'segment-started' && l.event.taskId === task.id)?.event,
        'the segment in window B',
      );
      await waitFor(() => fs.existsSync(path.join(wsB, 'steps.txt')), 'the command to run');

      a.child.kill(signal);
      await a.exited;
      const done = await waitFor(() => {
        const t = c.engine.service.getTask(task.id);
        return t && ['completed', 'failed', 'cancelled'].includes(t.status) ? t : undefined;
      }, 'the task to end');

      const received = listener.requests();
      const carried = received.filter(
        (r) => JSON.stringify(r.headers).includes(FAKE_LOGIN) || JSON.stringify(r.headers).includes('opk-local-'),
      );
      assert.deepEqual(
        carried.map((r) => r.url),
        [],
        `requests that reached the other ${listener.asOtherUser ? 'uid (65534)' : 'stand-in listener'} with a credential`,
      );
      assert.equal(received.length, 0, 'nothing reached it at all');
      assert.equal(done.status, 'completed', done.failureReason ?? '');
      assert.equal(done.sessionId, started.sessionId, 'the same session');
      const requests = upstream.messageRequests();
      assert.ok(
        requests.length >= 2 && requests.every((r) => r.headers.authorization === `Bearer ${FAKE_LOGIN}`),
        'the login went to the model API only',
      );
    });
  }
});
