// The core of "Off-Peak: Set Notification Target…" and "Send Test Notification"
// (docs/flows.md#away-notifications): the steps VS Code supplies (input box, pick, confirmation,
// SecretStorage) are recorded here; the test message goes over real HTTP to a local receiver
// (test/fixtures/notify-receiver.ts, a FIXTURE standing in for ntfy / a webhook).
import assert from 'node:assert/strict';
import { guessTargetKind, parseTargetUrl } from '../../src/notify/notify-target';
import { sendTestNotification, setNotificationTarget, type SetTargetSteps } from '../../src/notify/target-command';
import { NtfyPayloadSchema, WebhookPayloadSchema, type NotifyTarget, type NotifyTargetKind } from '../../src/protocol/notify';
import { startNotifyReceiver, type NotifyReceiver } from '../fixtures/notify-receiver';

describe('notification target command (core)', () => {
  let receiver: NotifyReceiver;
  beforeEach(async () => (receiver = await startNotifyReceiver()));
  afterEach(async () => receiver.close());

  function steps(url: string | undefined, over: Partial<SetTargetSteps> = {}) {
    const saved: NotifyTarget[] = [];
    const asked: string[] = [];
    const guesses: NotifyTargetKind[] = [];
    let removed = 0;
    const s: SetTargetSteps = {
      askUrl: async () => url,
      pickKind: async (guess) => (guesses.push(guess), guess),
      keepAfterFailure: async (error) => (asked.push(error), false),
      save: async (t) => void saved.push(t),
      remove: async () => void removed++,
      now: () => Date.UTC(2026, 0, 1),
      ...over,
    };
    return { s, saved, asked, guesses, removed: () => removed };
  }

  it('sends a test message to the URL given and keeps the target once it arrived', async () => {
    const run = steps(`${receiver.origin}/topic-secret-123`, { pickKind: async () => 'ntfy' });
    const outcome = await setNotificationTarget(run.s);
    assert.equal(outcome.kind, 'saved');
    assert.deepEqual(run.saved, [{ kind: 'ntfy', url: `${receiver.origin}/topic-secret-123` }]);
    assert.equal(receiver.posts.length, 1);
    const body = NtfyPayloadSchema.parse(receiver.posts[0].json);
    assert.deepEqual([body.topic, body.title], ['topic-secret-123', 'Off-Peak: test notification']);
  });

  it('does not keep a target whose test failed unless the user says so, and names only the status', async () => {
    receiver.failNext(500);
    const run = steps(`${receiver.origin}/hook`);
    const outcome = await setNotificationTarget(run.s);
    assert.equal(outcome.kind, 'not-saved');
    assert.deepEqual(run.asked, ['HTTP 500']);
    assert.deepEqual(run.saved, []);
    receiver.failNext(500);
    const keep = steps(`${receiver.origin}/hook`, { keepAfterFailure: async () => true });
    assert.equal((await setNotificationTarget(keep.s)).kind, 'saved');
    assert.equal(keep.saved.length, 1);
  });

  it('refuses plain http to another host, a URL with a password, and text that is no URL; empty removes the target', async () => {
    for (const bad of ['http://ntfy.example.com/topic', 'https://user:pw@ntfy.sh/topic', 'not a url']) {
      const run = steps(bad);
      const outcome = await setNotificationTarget(run.s);
      assert.equal(outcome.kind, 'invalid', bad);
      assert.ok(outcome.kind === 'invalid' && !outcome.error.includes('pw'), 'the error does not repeat the password');
      assert.deepEqual(run.saved, []);
    }
    const run = steps('  ');
    assert.equal((await setNotificationTarget(run.s)).kind, 'removed');
    assert.equal(run.removed(), 1);
    assert.equal(receiver.posts.length, 0);
  });

  it('item 5: plain http goes only to a literal loopback address: localhost is refused (it may resolve to ::1 first, which another user can bind)', () => {
    assert.throws(() => parseTargetUrl('http://localhost:8080/hook'), /127\.0\.0\.1/);
    assert.equal(parseTargetUrl('http://127.0.0.1:8080/hook').host, '127.0.0.1:8080');
    assert.equal(parseTargetUrl('http://[::1]:8080/hook').host, '[::1]:8080');
    assert.equal(parseTargetUrl('https://localhost:8443/hook').host, 'localhost:8443');
  });

  it('guesses the kind from the URL (Slack, Discord, ntfy, else a JSON webhook)', () => {
    assert.deepEqual(
      [
        'https://hooks.slack.com/services/T/B/x',
        'https://discord.com/api/webhooks/1/x',
        'https://ntfy.sh/topic',
        'https://example.com/hook',
      ].map((u) => guessTargetKind(parseTargetUrl(u))),
      ['slack', 'discord', 'ntfy', 'webhook'],
    );
  });

  it('"Send Test Notification" posts the test event once, with nothing of the user\'s, and reports a network failure without the URL', async () => {
    const result = await sendTestNotification({ kind: 'webhook', url: `${receiver.origin}/hook-secret` }, Date.UTC(2026, 0, 1));
    assert.deepEqual(result, { ok: true, status: 200 });
    const body = WebhookPayloadSchema.parse(receiver.posts[0].json);
    assert.equal(body.event, 'test');
    assert.equal(body.task, undefined);
    const origin = receiver.origin;
    await receiver.close();
    const down = await sendTestNotification({ kind: 'webhook', url: `${origin}/hook-secret` }, 0);
    assert.equal(down.ok, false);
    assert.ok(!down.ok && down.retryable && !down.error.includes('hook-secret'), JSON.stringify(down));
    receiver = await startNotifyReceiver();
  });
});
