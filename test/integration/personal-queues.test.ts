// Issue 21 item 5 (docs/architecture.md#personal-mode): switching mode never mixes the two queues.
// A task that took its ticket from the team's gateway stays with it: personal mode's engine does
// not list, run or sync it, the panel's notice says it waits, and switching back finds it as it
// was, same ticket. And the other way round. Real parts: the reference gateway on loopback (team
// mode), the local authority (personal mode), the real task database files.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { otherQueueNotice } from '../../src/personal/other-queue';
import { startWorld, USER_KEY, type GatewayWorld } from '../e2e/gateway-fixture';
import { startPersonalTestEngine, startTestEngine } from '../e2e/test-engine';

describe('personal mode and team mode keep their own queues', function () {
  this.timeout(120_000);
  let world: GatewayWorld;

  afterEach(async () => {
    await world.close();
  });

  it("a team task stays with the team's gateway while in personal mode (not listed, no ticket taken from that gateway, told in the notice) and is there as it was after switching back; a personal task likewise", async () => {
    // Closed windows: the team task's ticket stays queued.
    world = await startWorld({ alwaysOpen: false, windowsClosed: true });
    const storageDir = path.join(world.root, 'globalStorage');
    const ws = path.join(world.root, 'ws');
    fs.mkdirSync(ws);

    const team = await startTestEngine({
      storageDir,
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
      workspaceKeys: [ws],
    });
    await team.service.availability.refresh();
    const teamTask = await team.service.create({
      title: 'team',
      prompt: 'team work',
      permissionMode: 'plan',
      workspacePath: ws,
      isolation: 'inPlace',
    });
    const teamTicket = team.service.getTask(teamTask.id)!.serverTicketId;
    assert.ok(teamTicket, 'the team task took a ticket from the gateway');
    await team.dispose();

    // Switch to personal mode.
    const personal = await startPersonalTestEngine({
      storageDir,
      agent: 'reference',
      workspaceKeys: [ws],
      personal: { upstreamUrl: world.upstream.url, hours: '03:00-03:01' },
    });
    try {
      assert.equal(personal.engine.service.getTask(teamTask.id), undefined, 'personal mode does not list the team task');
      assert.equal(personal.engine.service.listTasks().length, 0);
      const ticketsAtGateway = await world.gateway.authority.counts();
      assert.match(
        (await otherQueueNotice(storageDir, 'personal')) ?? '',
        /^1 unfinished task of your team's gateway waits there, untouched/,
      );
      await personal.engine.service.availability.refresh();
      const personalTask = await personal.engine.service.create({
        title: 'mine',
        prompt: 'my work',
        permissionMode: 'plan',
        workspacePath: ws,
        isolation: 'inPlace',
      });
      assert.ok(
        personal.engine.service.getTask(personalTask.id)!.serverTicketId,
        'the personal task took its ticket from the local authority',
      );
      assert.deepEqual(await world.gateway.authority.counts(), ticketsAtGateway, "the team's gateway saw no ticket of personal mode");
      await personal.engine.dispose();
      await personal.authority.dispose();

      // Back to team mode: the team task is there as it was; the personal one waits in its own queue.
      const back = await startTestEngine({
        storageDir,
        gatewayUrl: world.gateway.url,
        apiKey: USER_KEY,
        agent: 'reference',
        workspaceKeys: [ws],
      });
      try {
        const again = back.service.getTask(teamTask.id);
        assert.equal(again?.status, 'queued');
        assert.equal(again?.serverTicketId, teamTicket, 'the same ticket of the same gateway');
        assert.equal(back.service.getTask(personalTask.id), undefined, 'team mode does not list the personal task');
        assert.match(
          (await otherQueueNotice(storageDir, 'gateway')) ?? '',
          /^1 unfinished task of personal mode waits on this machine, untouched/,
        );
      } finally {
        await back.dispose();
      }
    } finally {
      await personal.engine.dispose();
      await personal.authority.dispose();
    }
  });
});
