// The banners above the cards tell the truth now (docs/flows.md#what-the-panel-says): over the real
// webview protocol (a MessageChannel, the real TaskService on a sql.js file, the real reference
// gateway on loopback behind the fault proxy, a fixture standing in for an outage), the texts the
// webview receives are worded for a person and the webview's banner rules clear each banner once
// it stops being true.
import assert from 'node:assert/strict';
import type { PanelState } from '../../src/protocol/webview';
import { confirmationSeen, failureOutlived, gatewayUnreachableShown } from '../../webview/banner-rules';
import { connect, PANEL_WORKSPACE } from './panel-link';
import { taskInput, World } from './service-harness';

async function until<T>(what: string, fn: () => T | undefined | false): Promise<T> {
  for (let i = 0; i < 1_000; i++) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Raw transport words no person should read in a banner. */
const RAW = /ECONNREFUSED|ECONNRESET|127\.0\.0\.1|Gateway (take|availability|status):/;

describe('panel banners tell the truth (real gateway, webview channel)', function () {
  this.timeout(60_000);
  let world: World;
  let link: ReturnType<typeof connect>;
  const last = (): PanelState | undefined => link.webview.states.at(-1);

  beforeEach(async () => {
    // The snapshot's own re-check after a failed check is an hour away: a banner that goes sooner went because something else saw the gateway answer.
    world = await World.start({ availability: { errorBackoffMs: 3_600_000, errorBackoffMaxMs: 3_600_000 } });
    await world.openWindow();
    link = connect({
      service: world.windows[0].service,
      store: world.windows[0].store,
      clock: world.clock,
      hasApiKey: () => world.apiKey !== undefined,
    });
    link.webview.channel.ready();
    await until('the first snapshot', () => last());
  });
  afterEach(async () => {
    link.close();
    await world.close();
  });

  it('a take error while the gateway is down is worded for a person (no raw ECONNREFUSED, no address), and its banner goes once the gateway answers again', async () => {
    await world.proxy.goDown();
    await link.webview.channel.request('refresh', {});
    const down = await until('the outage in the snapshot', () => last()?.availability.kind === 'unreachable' && last());
    assert.match(down.availability.reason ?? '', /^The gateway could not be reached \(the connection was (refused|reset|closed)\)\.$/);
    assert.ok(gatewayUnreachableShown(down.availability, down.hasApiKey), 'with a key set, the outage banner shows');

    const error = await link.webview.channel
      .request('createTask', {
        input: { title: 't', prompt: 'p', workspacePath: PANEL_WORKSPACE, permissionMode: 'default', model: null, thoughtLevel: null },
      })
      .then(
        () => assert.fail('created while the gateway was down'),
        (e: Error & { code?: string }) => e,
      );
    assert.doesNotMatch(error.message, RAW);
    assert.match(
      error.message,
      /^Cannot create the task now: the gateway could not be reached \(the connection was (refused|reset|closed)\)/,
    );
    assert.equal(error.code, 'gateway_unavailable');
    const failure = { at: world.clock.now(), code: error.code };
    assert.equal(failureOutlived(failure, down.availability), false, 'still true while the gateway is down');

    world.clock.advance(1_000);
    await world.proxy.comeUp();
    await link.webview.channel.request('refresh', {});
    const back = await until('the gateway answering again', () => last()?.availability.kind === 'enabled' && last());
    assert.equal(failureOutlived(failure, back.availability), true, 'the take error banner goes');
    assert.equal(
      failureOutlived({ at: failure.at, code: 'invalid_input' }, back.availability),
      false,
      'an error the gateway coming back does not change stays',
    );
  });

  it('the gateway going down while a task waits in its queue shows "cannot be reached" with no refresh asked (the sync finds it), and the banner goes at the sync\'s next answer', async () => {
    const enabled = await until('the gateway answering', () => last()?.availability.kind === 'enabled' && last());
    assert.equal(gatewayUnreachableShown(enabled.availability, enabled.hasApiKey), false);
    const { service } = world.windows[0];
    await service.create(taskInput({ workspacePath: PANEL_WORKSPACE }));
    const syncErrors: Error[] = [];
    const sub = service.onSyncError((e) => syncErrors.push(e));
    await world.proxy.goDown();
    // Only the sync's own polls of the queued ticket meet the outage: nothing asks for a refresh.
    await world.advance(60_000);
    sub.dispose();
    assert.ok(syncErrors.length > 0, 'the sync met the outage');
    const down = await until('the outage in the snapshot', () => last()?.availability.kind === 'unreachable' && last());
    assert.ok(gatewayUnreachableShown(down.availability, down.hasApiKey), 'with a key set, the outage banner shows');
    assert.doesNotMatch(down.availability.reason ?? '', RAW);

    await world.proxy.comeUp();
    await world.advance(60_000);
    await until('the gateway answering again in the snapshot', () => last()?.availability.kind === 'enabled');
    assert.ok(world.clock.now() < down.availability.nextCheckAt!, "before the snapshot's own re-check");
  });

  it('no "gateway cannot be reached" while the only problem is a missing key', async () => {
    world.apiKey = undefined;
    await link.webview.channel.request('refresh', {});
    const state = await until('the snapshot without a key', () => last()?.hasApiKey === false && last());
    assert.equal(gatewayUnreachableShown(state.availability, state.hasApiKey), false);
    assert.doesNotMatch(state.availability.reason ?? '', RAW);
  });

  it('a confirmation without a task to follow (the key accepted, a follow-up queued) goes once seen: the panel was hidden after showing it', async () => {
    assert.equal(confirmationSeen(last()!.visible ?? true), false, 'shown while the panel is visible');
    link.setVisible(false);
    const hidden = await until('the hidden panel', () => last()?.visible === false && last());
    assert.equal(confirmationSeen(hidden.visible ?? true), true);
  });
});
