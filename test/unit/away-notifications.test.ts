// Away notifications (docs/flows.md#away-notifications): the outbox in a real sql.js task DB, sent
// by the lease holder over real HTTP to a local receiver (test/fixtures/notify-receiver.ts, a
// FIXTURE standing in for ntfy / Slack / Discord / a JSON webhook). Time is a manual clock; the
// retry and quiet-hour timers are recorded, and the test looks again when it moved the clock.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import type { Timers } from '../../src/core/timers';
import { AwayNotifications, notifyKeys, type AwayNotificationsOptions } from '../../src/notify/away-notifications';
import { INCLUDE_NOTHING, type NotifyInclude } from '../../src/notify/notify-include';
import {
  DiscordPayloadSchema,
  NtfyPayloadSchema,
  SlackPayloadSchema,
  WebhookPayloadSchema,
  type NotifyEvent,
  type NotifyTarget,
} from '../../src/protocol/notify';
import { TaskStore } from '../../src/store';
import { startNotifyReceiver, type NotifyReceiver } from '../fixtures/notify-receiver';

const PROMPT_TITLE = 'Rotate the key sk-live-PROMPTTEXT in config.ts';
const SECRET_TOPIC = 'offpeak-topic-4f9c2e-SECRET';
const QUESTION = 'Run: curl -H "Authorization: Bearer TOOLINPUT" https://example.invalid';
const REASON = 'the agent exited with code 1: FAILUREDETAIL at src/secret.ts:12';

const recordedTimers = (): Timers => ({ setTimeout: () => ({ id: 0 }), clearTimeout: () => {} });

describe('away notifications: outbox, lease holder, receiver', function () {
  this.timeout(20_000);
  let dir: string;
  let clock: ManualClock;
  let receiver: NotifyReceiver;
  const stores: TaskStore[] = [];
  const senders: AwayNotifications[] = [];
  let logs: string[];

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-notify-'));
    // Noon local time: outside "22:00-07:00".
    const noon = new Date();
    noon.setHours(12, 0, 0, 0);
    clock = new ManualClock(noon.getTime());
    receiver = await startNotifyReceiver();
    logs = [];
  });
  afterEach(async () => {
    for (const s of senders.splice(0)) await s.dispose();
    for (const s of stores.splice(0)) await s.close();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function window(
    over: Partial<AwayNotificationsOptions> & { leader?: () => boolean; target?: () => Promise<NotifyTarget | undefined> } = {},
  ) {
    const store = await TaskStore.open({ directory: dir, clock, watch: false, durable: false });
    stores.push(store);
    const away = new AwayNotifications({
      store,
      windowId: `w${senders.length}`,
      isLeader: over.leader ?? (() => true),
      clock,
      timers: recordedTimers(),
      target: async () => ({ kind: 'webhook', url: `${receiver.origin}/hook/${SECRET_TOPIC}` }),
      enabled: () => true,
      retryDelaysMs: [1_000, 5_000],
      log: (l) => logs.push(l),
      timeZone: () => Intl.DateTimeFormat().resolvedOptions().timeZone,
      ...over,
    });
    senders.push(away);
    return { store, away };
  }

  const ref = { taskId: 'task-0123456789', title: PROMPT_TITLE, folder: '/home/me/private-project' };
  const failed: NotifyEvent = { kind: 'failed', ...ref, reason: REASON };
  const asked: NotifyEvent = { kind: 'needs-input', ...ref, askId: 'ask-1', tool: 'Bash', question: QUESTION };

  it('sends each kind with the tool name and short task id, and no prompt text, question input, reason, folder or target URL in any payload', async () => {
    const { away } = await window();
    await away.enqueue(notifyKeys.question(ref.taskId, 'ask-1'), asked);
    await away.enqueue(notifyKeys.result(ref.taskId, 5), failed);
    await away.enqueue(notifyKeys.result('task-ready', 6), { kind: 'ready', ...ref, taskId: 'task-ready' });
    await away.idle();
    assert.equal(receiver.posts.length, 3);
    for (const post of receiver.posts) {
      const body = WebhookPayloadSchema.parse(post.json);
      for (const secret of ['PROMPTTEXT', 'Rotate the key', 'TOOLINPUT', 'curl', 'FAILUREDETAIL', 'private-project', SECRET_TOPIC]) {
        assert.ok(!post.raw.includes(secret), `"${secret}" left in the ${body.event} payload: ${post.raw}`);
      }
    }
    const [q, f, r] = receiver.posts.map((p) => WebhookPayloadSchema.parse(p.json));
    assert.deepEqual([q.event, f.event, r.event], ['needs-input', 'failed', 'ready']);
    assert.equal(q.tool, 'Bash');
    assert.match(q.text, /Task task-012 needs input: it asks before running Bash\./);
    assert.deepEqual(q.task, { id: ref.taskId });
    assert.ok(logs.every((l) => !l.includes(SECRET_TOPIC)));
  });

  it('sends a field only when its include setting is on (title, folder, question, reason), each alone', async () => {
    const fields: [keyof NotifyInclude, string, NotifyEvent][] = [
      ['taskTitle', 'PROMPTTEXT', failed],
      ['folder', 'private-project', failed],
      ['question', 'TOOLINPUT', asked],
      ['failureReason', 'FAILUREDETAIL', failed],
    ];
    let include: NotifyInclude = INCLUDE_NOTHING;
    const { away } = await window({ include: () => include });
    for (const [i, [field, marker, event]] of fields.entries()) {
      include = { ...INCLUDE_NOTHING, [field]: true };
      await away.enqueue(`k-${i}`, event);
      await away.idle();
      const post = receiver.posts.at(-1)!;
      assert.ok(post.raw.includes(marker), `${field} on: "${marker}" is sent`);
      for (const [other, otherMarker] of fields)
        if (other !== field) assert.ok(!post.raw.includes(otherMarker), `${other} off: "${otherMarker}" is not sent`);
    }
    assert.equal(receiver.posts.length, fields.length);
  });

  it('retries after a 500 (the next attempt after its delay) and records one sent event', async () => {
    const { store, away } = await window();
    receiver.failNext(500);
    await away.enqueue('k', failed);
    await away.idle();
    assert.equal(receiver.posts.length, 1, 'the first attempt got the 500');
    assert.deepEqual(pick(store.read((tx) => tx.notify.get('k'))!), { state: 'pending', attempts: 1 });
    assert.match(logs.join('\n'), /attempt 1\) failed: HTTP 500; retrying in 1 s/);
    away.kick();
    await away.idle();
    assert.equal(receiver.posts.length, 1, 'not before its delay');
    clock.advance(1_000);
    away.kick();
    await away.idle();
    assert.equal(receiver.posts.length, 2);
    assert.deepEqual(pick(store.read((tx) => tx.notify.get('k'))!), { state: 'sent', attempts: 2 });
    away.kick();
    await away.idle();
    assert.equal(receiver.posts.length, 2, 'a sent event is never sent again');
  });

  it('gives up after its bounded attempts (5xx each time), or at once on a 4xx, and says so in the log', async () => {
    const { store, away } = await window();
    receiver.failNext(503, 503, 503, 404);
    await away.enqueue('k', failed);
    for (let i = 0; i < 5; i++) {
      await away.idle();
      clock.advance(10_000);
      away.kick();
    }
    await away.idle();
    assert.deepEqual(
      pick(store.read((tx) => tx.notify.get('k'))!),
      { state: 'failed', attempts: 3 },
      'three attempts: the first and two retries',
    );
    assert.match(logs.at(-1)!, /attempt 3\) failed: HTTP 503; given up/);
    await away.enqueue('k2', failed);
    await away.idle();
    assert.deepEqual(pick(store.read((tx) => tx.notify.get('k2'))!), { state: 'failed', attempts: 1 });
    assert.equal(receiver.posts.length, 4);
  });

  it('only the lease holder sends; the same event written by two windows is one row, sent once; the next holder sends what the first left', async () => {
    let leader = 'a';
    const a = await window({ leader: () => leader === 'a' });
    const b = await window({ leader: () => leader === 'b' });
    await b.away.enqueue('same', failed);
    await a.away.enqueue('same', failed);
    await Promise.all([a.away.idle(), b.away.idle()]);
    assert.equal(receiver.posts.length, 1);
    assert.equal(a.store.read((tx) => tx.notify.get('same'))?.doneBy, 'w0', 'sent by the holder, window A');
    // A hand-over: the event comes while A holds the lease but A goes before sending it.
    leader = 'none';
    await b.away.enqueue('later', asked);
    await b.away.idle();
    assert.equal(receiver.posts.length, 1, 'nobody holds the lease: nothing is sent');
    leader = 'b';
    b.store.checkForExternalChange();
    b.away.kick();
    await b.away.idle();
    a.away.kick();
    await a.away.idle();
    assert.equal(receiver.posts.length, 2);
    assert.equal(WebhookPayloadSchema.parse(receiver.posts[1].json).event, 'needs-input');
    assert.equal(b.store.read((tx) => tx.notify.get('later'))?.doneBy, 'w1');
  });

  it('writes nothing while no target is set; a target removed later drops what waits', async () => {
    let enabled = false;
    let target: NotifyTarget | undefined;
    const { store, away } = await window({ enabled: () => enabled, target: async () => target });
    await away.enqueue('k', failed);
    assert.equal(store.read((tx) => tx.notify.all()).length, 0);
    enabled = true;
    await away.enqueue('k', failed);
    await away.idle();
    assert.deepEqual(pick(store.read((tx) => tx.notify.get('k'))!), { state: 'dropped', attempts: 0 });
    assert.equal(receiver.posts.length, 0);
  });

  it('holds events in quiet hours until they end; a held question answered meanwhile is dropped then, a held result is sent', async () => {
    const night = new Date(clock.now());
    night.setHours(23, 0, 0, 0);
    clock.set(night.getTime());
    const { store, away } = await window({ quietHours: () => '22:00-07:00' });
    await store.mutate((tx) =>
      tx.tasks.insert({
        id: ref.taskId,
        title: 't',
        prompt: 'p',
        permissionMode: 'default',
        workspacePath: '/w',
        serverTicketId: 'tk',
        schedulable: true,
      }),
    );
    await away.enqueue(notifyKeys.question(ref.taskId, 'ask-1'), asked);
    await away.enqueue(notifyKeys.result(ref.taskId, 1), failed);
    await away.idle();
    assert.equal(receiver.posts.length, 0, 'nothing in quiet hours');
    const morning = new Date(night);
    morning.setDate(morning.getDate() + 1);
    morning.setHours(7, 0, 0, 0);
    assert.deepEqual(
      store.read((tx) => tx.notify.all().map((r) => r.heldUntil)),
      [morning.getTime(), morning.getTime()],
    );
    clock.set(morning.getTime());
    away.kick();
    await away.idle();
    assert.deepEqual(
      receiver.posts.map((p) => WebhookPayloadSchema.parse(p.json).event),
      ['failed'],
    );
    assert.equal(
      store.read((tx) => tx.notify.get(notifyKeys.question(ref.taskId, 'ask-1')))?.state,
      'dropped',
      'the question is no longer open',
    );
  });

  it('tells a usage-limit hold once (lease holder, from the ledger) and its end once, when nothing waits for it any more', async () => {
    const { store, away } = await window();
    const resetAt = clock.now() + 3_600_000;
    await store.mutate((tx) => {
      tx.tasks.insert({
        id: 'held',
        title: 't',
        prompt: 'p',
        permissionMode: 'default',
        workspacePath: '/w',
        serverTicketId: 'tk',
        schedulable: true,
      });
      tx.tickets.insert({ ticketId: 'tk', taskId: 'held', serverState: 'active' });
      tx.tickets.markUsageLimit('tk', resetAt);
    });
    away.start();
    await away.idle();
    away.kick();
    await away.idle();
    assert.deepEqual(
      receiver.posts.map((p) => WebhookPayloadSchema.parse(p.json)).map((b) => [b.event, b.reset_at]),
      [['usage-limit-hold', new Date(resetAt).toISOString()]],
    );
    clock.set(resetAt + 1);
    away.kick();
    await away.idle();
    away.kick();
    await away.idle();
    assert.deepEqual(
      receiver.posts.map((p) => WebhookPayloadSchema.parse(p.json).event),
      ['usage-limit-hold', 'usage-limit-end'],
    );
  });

  it('shapes the post for each kind of receiver (ntfy JSON publish to the root with the topic, Slack text escaped, Discord with no mentions)', async () => {
    let target: NotifyTarget = { kind: 'ntfy', url: `${receiver.origin}/${SECRET_TOPIC}` };
    const { away } = await window({ target: async () => target, include: () => ({ ...INCLUDE_NOTHING, taskTitle: true }) });
    const sneaky = { ...ref, title: '<!channel> @everyone [click](https://evil.invalid)' };
    await away.enqueue('n', { kind: 'ready', ...sneaky });
    await away.idle();
    const ntfy = receiver.posts[0];
    assert.equal(ntfy.path, '/');
    assert.equal(NtfyPayloadSchema.parse(ntfy.json).topic, SECRET_TOPIC);
    target = { kind: 'slack', url: `${receiver.origin}/hooks/T0/B0/x` };
    await away.enqueue('s', { kind: 'ready', ...sneaky });
    await away.idle();
    const slack = SlackPayloadSchema.parse(receiver.posts[1].json);
    assert.equal(receiver.posts[1].path, '/hooks/T0/B0/x');
    assert.ok(!slack.text.includes('<!channel>') && slack.text.includes('&lt;!channel&gt;'), slack.text);
    target = { kind: 'discord', url: `${receiver.origin}/api/webhooks/1/x` };
    await away.enqueue('d', { kind: 'ready', ...sneaky });
    await away.idle();
    const discord = DiscordPayloadSchema.parse(receiver.posts[2].json);
    assert.deepEqual(discord.allowed_mentions, { parse: [] });
    assert.ok(!discord.content.includes(']('), 'no link can form');
  });
});

function pick(row: { state: string; attempts: number }): { state: string; attempts: number } {
  return { state: row.state, attempts: row.attempts };
}
