// A gateway outage under a running task (docs/flows.md#segments): the REAL reference gateway as
// its own process on a SQLite file, killed with SIGKILL and started again on the same port and
// file, in front of the scripted fake model upstream (a test fixture standing in for the model
// API); the real HostEngine and a real reference-agent process.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { HostEngine } from '../../src/engine/host-engine';
import { toTaskCard } from '../../src/panel/task-card';
import { gatewayOutageText } from '../../webview/card-extras';
import { systemClock } from '../../src/core/clock';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';
import { spawnGateway, TempDir, type RunningGateway } from '../integration/gateway-helpers';
import { connect } from '../integration/panel-link';
import { makeGitWorkspace, processAlive, shape, USER_KEY } from './gateway-fixture';
import { startTestEngine, waitFor } from './test-engine';

describe('gateway outage under a running task (real gateway process on a SQLite file, reference agent)', function () {
  let upstream: FakeAnthropicUpstream;
  let dir: TempDir;
  let host: HostEngine | undefined;
  let link: ReturnType<typeof connect> | undefined;
  const gateways: RunningGateway[] = [];

  beforeEach(async () => {
    upstream = await FakeAnthropicUpstream.start();
    dir = new TempDir();
  });
  afterEach(async () => {
    link?.close();
    link = undefined;
    await host?.dispose();
    host = undefined;
    for (const g of gateways.splice(0)) {
      if (g.child.exitCode === null && g.child.signalCode === null) g.child.kill('SIGKILL');
      await g.exited;
    }
    await upstream.close();
    dir.remove();
  });

  /** The gateway on `port` (0: any) over the same SQLite file every time. */
  async function startGatewayProcess(port: number): Promise<RunningGateway> {
    const args = [
      '--port',
      String(port),
      '--store',
      'sqlite',
      '--db',
      dir.file('gateway.sqlite'),
      '--always-open',
      '--promote-interval-ms',
      '100',
      '--queued-poll-ms',
      '200',
      '--max-poll-ms',
      '1000',
      '--status-max-wait-ms',
      '2000',
      '--upstream-url',
      upstream.url,
      '--log-level',
      'silent',
    ];
    const g = await spawnGateway(args, {
      env: { OFFPEAK_GATEWAY_USERS: `e2e-user:${USER_KEY}`, OFFPEAK_UPSTREAM_API_KEY: 'upstream-secret' },
    });
    gateways.push(g);
    return g;
  }

  async function kill(g: RunningGateway): Promise<void> {
    g.child.kill('SIGKILL');
    await g.exited;
  }

  /** A task whose one tool call waits for `marker`, so the test decides when its next model request is made. */
  async function startTask(
    gatewayUrl: string,
    outageMaxWaitMs?: number,
  ): Promise<{ h: HostEngine; taskId: string; ws: string; marker: string }> {
    host = await startTestEngine({
      storageDir: dir.file('globalStorage'),
      gatewayUrl,
      apiKey: USER_KEY,
      agent: 'reference',
      outageMaxWaitMs,
    });
    const h = host;
    await waitFor(() => h.service.isLeader, 'the lease');
    const ws = makeGitWorkspace(dir.path);
    const marker = path.join(dir.path, 'go-on');
    const started = path.join(dir.path, 'tool-started');
    upstream.enqueue(
      {
        kind: 'tool_use',
        name: 'run_command',
        input: { command: `touch '${started}'; while [ ! -f '${marker}' ]; do sleep 0.1; done; echo step > step.txt` },
      },
      { kind: 'text', text: 'Finished after the outage.' },
    );
    const created = await h.service.create({
      title: 'outage',
      prompt: 'do the step',
      permissionMode: 'bypassPermissions',
      workspacePath: ws,
    });
    // The agent got the first answer and runs its tool; its next model request comes once the marker exists.
    await waitFor(() => fs.existsSync(started), 'the tool to run', 60_000);
    await waitFor(() => h.service.ticketsOf(created.id)[0]?.activeAt != null, 'the first admitted request in the ledger');
    return { h, taskId: created.id, ws, marker };
  }

  const cardOf = (h: HostEngine, taskId: string) => toTaskCard(h.service.getTask(taskId)!, h.service.ticketsOf(taskId));

  it('item 4: the gateway is killed and restarted on the same SQLite file mid-task: the running task waits ("Gateway unreachable since …"), then completes in the same segment', async () => {
    const first = await startGatewayProcess(0);
    const port = Number(new URL(first.url).port);
    const { h, taskId, ws, marker } = await startTask(first.url);
    // The panel as the webview sees it: snapshots pushed on every change of the task database.
    link = connect({ service: h.service, store: h.store, clock: systemClock, hasApiKey: () => true, asks: h.runtime });
    link.webview.channel.ready();
    const states = link.webview.states;
    const panelCard = () => states[states.length - 1]?.tasks.find((c) => c.id === taskId);

    await kill(first);
    fs.writeFileSync(marker, '');
    // The agent's next model request cannot reach the gateway: it is held, and every card says so.
    const seen = await waitFor(() => {
      const task = h.service.getTask(taskId)!;
      if (task.status !== 'running') return { failed: `the task left running: ${task.status} (${task.failureReason ?? ''})` };
      const since = cardOf(h, taskId).gatewayUnreachableSince;
      return typeof since === 'number' && { since };
    }, 'the card to say the gateway is unreachable');
    assert.ok(!('failed' in seen), 'failed' in seen ? seen.failed : '');
    const since = (seen as { since: number }).since;
    assert.match(gatewayOutageText(since), /^Gateway unreachable since \d\d:\d\d · waiting$/);
    const pushed = await waitFor(() => panelCard()?.gatewayUnreachableSince != null && panelCard(), 'the panel to push the outage');
    assert.deepEqual([pushed.status, pushed.gatewayUnreachableSince], ['running', since]);
    const segment = h.runtime.segment(taskId)!;
    assert.ok(processAlive(segment.pid), 'the agent still runs while the gateway is away');
    assert.equal(upstream.messageRequests().length, 1, 'nothing reached the model meanwhile');

    const second = await startGatewayProcess(port);
    assert.equal(second.url, first.url, 'the same address as before');
    await waitFor(() => h.service.getTask(taskId)!.status !== 'running', 'the task to finish', 120_000);
    const done = h.service.getTask(taskId)!;
    assert.equal(done.status, 'completed', `failure: ${done.failureReason}`);
    assert.equal(fs.readFileSync(path.join(ws, 'step.txt'), 'utf8'), 'step\n');
    const agentLog = fs.readFileSync(segment.logFile, 'utf8');
    assert.match(agentLog, /the gateway cannot be reached[\s\S]*the gateway is reachable again/);
    assert.doesNotMatch(agentLog, /\[retry \d/, "the held request spent none of the agent's own retries");
    assert.equal(cardOf(h, taskId).gatewayUnreachableSince, null);
    await waitFor(() => panelCard()?.status === 'completed', 'the completed card in the panel');
    assert.equal(panelCard()!.gatewayUnreachableSince, null);

    const requests = upstream.messageRequests();
    assert.equal(requests.length, 2, 'the held request reached the model once, after the restart');
    assert.deepEqual(shape(requests[1].body), ['user:text', 'assistant:tool_use', 'user:tool_result']);
    const tickets = h.service.ticketsOf(taskId);
    assert.deepEqual(
      tickets.map((t) => [t.endReason, t.gatewayUnreachableSince]),
      [['completed', null]],
      'one segment on one ticket, no outage left on it',
    );
    await waitFor(
      () => h.service.ticketsOf(taskId).every((t) => t.settleState === 'settled'),
      'the ticket settled with the restarted gateway',
    );
  });

  it('item 4: a gateway that stays away past the bound fails the task, saying why; the agent is stopped', async () => {
    const first = await startGatewayProcess(0);
    const { h, taskId, marker } = await startTask(first.url, 1_500);
    const pid = h.runtime.segment(taskId)?.pid;

    await kill(first);
    fs.writeFileSync(marker, '');
    await waitFor(() => h.service.getTask(taskId)!.status !== 'running', 'the task to end', 60_000);
    const failed = h.service.getTask(taskId)!;
    assert.equal(failed.status, 'failed');
    assert.match(
      failed.failureReason ?? '',
      /^The off-peak gateway could not be reached from \d\d:\d\d to \d\d:\d\d \(2 s, the longest a task waits for it\), so the task stopped\. Last error: .*ECONNREFUSED/,
    );
    assert.equal(processAlive(pid), false, 'the agent was stopped');
    assert.deepEqual(h.runtime.runningTaskIds, []);
    assert.equal(upstream.messageRequests().length, 1);
    assert.deepEqual(
      h.service.ticketsOf(taskId).map((t) => [t.endReason, t.gatewayUnreachableSince]),
      [['failed', null]],
    );
  });
});
