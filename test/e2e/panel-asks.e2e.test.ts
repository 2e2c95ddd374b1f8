// Needs input end to end in Node: a real reference-agent process asks before a command, the
// panel's snapshot shows the question on the card, and Allow / Deny sent as the webview's
// `answerAsk` request reaches the real runtime; the REAL reference gateway (loopback) stands in
// front of the scripted fake model upstream.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { systemClock } from '../../src/core/clock';
import { groupCards } from '../../webview/format';
import { connect } from '../integration/panel-link';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import type { HostEngine } from '../../src/engine/host-engine';
import { startTestEngine, waitFor } from './test-engine';

describe('needs input on the card, answered through the panel protocol (reference agent)', function () {
  let world: GatewayWorld;
  let host: HostEngine | undefined;
  let link: ReturnType<typeof connect> | undefined;

  afterEach(async () => {
    link?.close();
    link = undefined;
    await host?.dispose();
    host = undefined;
    await world?.close();
  });

  for (const decision of ['allow', 'deny'] as const) {
    it(`${decision === 'allow' ? 'Allow' : 'Deny'} on the card: the answer is accepted and the agent ${decision === 'allow' ? 'runs the command' : 'is refused'}; the card leaves Needs input`, async () => {
      world = await startWorld();
      host = await startTestEngine({
        storageDir: path.join(world.root, 'globalStorage'),
        gatewayUrl: world.gateway.url,
        apiKey: USER_KEY,
        agent: 'reference',
      });
      await waitFor(() => host!.service.isLeader, 'the lease');
      const h = host;
      link = connect({ service: h.service, store: h.store, clock: systemClock, hasApiKey: () => true, asks: h.runtime });
      link.webview.channel.ready();
      const webview = link.webview;
      const last = () => webview.states[webview.states.length - 1];

      world.upstream.enqueue(
        { kind: 'tool_use', name: 'run_command', input: { command: 'echo ran > ran.txt' } },
        { kind: 'text', text: 'Done.' },
      );
      const ws = makeGitWorkspace(world.root);
      const created = await h.service.create({ title: 'ask me', prompt: 'run it', permissionMode: 'default', workspacePath: ws });

      const card = await waitFor(
        () => last() && groupCards(last().tasks).needs_input.find((c) => c.id === created.id),
        'the card in Needs input',
      );
      assert.equal(card.status, 'running');
      assert.equal(card.ask?.tool, 'run_command');
      assert.match(card.ask?.question ?? '', /echo ran > ran\.txt/);
      assert.ok(card.ask!.deadlineAt > card.ask!.askedAt, 'the card carries the deadline it counts down to');
      assert.equal(card.ask?.id, h.runtime.pendingAsks(created.id)[0]?.id, 'the card shows the question the runtime holds');

      const inputDigest = card.ask!.inputDigest;
      assert.deepEqual(await webview.channel.request('answerAsk', { taskId: created.id, askId: card.ask!.id, decision, inputDigest }), {
        outcome: 'accepted',
      });
      assert.deepEqual(await webview.channel.request('answerAsk', { taskId: created.id, askId: card.ask!.id, decision, inputDigest }), {
        outcome: 'already-answered',
      });
      await waitFor(() => h.service.getTask(created.id)?.status === 'completed', 'completed');
      assert.equal(fs.existsSync(path.join(ws, 'ran.txt')), decision === 'allow');
      const done = await waitFor(() => last().tasks.find((c) => c.id === created.id && c.status === 'completed'), 'the completed card');
      assert.equal(done.ask, null);
      assert.deepEqual(groupCards(last().tasks).needs_input, []);
    });
  }
});
