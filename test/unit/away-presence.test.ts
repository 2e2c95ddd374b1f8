// Away notifications respect presence (docs/flows.md#away-notifications): a question the user
// answers in the editor within the grace is not pushed to the phone, and the task a notification
// names is one the card names too. The outbox in a real sql.js task DB, sent over real HTTP to a
// local receiver (test/fixtures/notify-receiver.ts, a FIXTURE standing in for a JSON webhook).
// Time is a manual clock; timers are recorded, and the test looks again when it moved the clock.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import type { Timers } from '../../src/core/timers';
import { AwayNotifications, notifyKeys, type AwayNotificationsOptions } from '../../src/notify/away-notifications';
import { INCLUDE_NOTHING } from '../../src/notify/notify-include';
import { messageOf } from '../../src/notify/notify-message';
import { toTaskCard } from '../../src/panel/task-card';
import { WebhookPayloadSchema, type NotifyEvent } from '../../src/protocol/notify';
import { TaskStore } from '../../src/store';
import { startNotifyReceiver, type NotifyReceiver } from '../fixtures/notify-receiver';

const recordedTimers = (): Timers => ({ setTimeout: () => ({ id: 0 }), clearTimeout: () => {} });
const TASK = '4ea89496-1c2d-4e5f-8a9b-0c1d2e3f4a5b';

describe('item 7: away notifications respect presence', function () {
  this.timeout(20_000);
  let dir: string;
  let clock: ManualClock;
  let receiver: NotifyReceiver;
  let store: TaskStore;
  const senders: AwayNotifications[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-presence-'));
    const noon = new Date();
    noon.setHours(12, 0, 0, 0);
    clock = new ManualClock(noon.getTime());
    receiver = await startNotifyReceiver();
    store = await TaskStore.open({ directory: dir, clock, watch: false, durable: false });
    await store.mutate((tx) => {
      tx.tasks.insert({
        id: TASK,
        title: 'Fix the parser',
        prompt: 'p',
        permissionMode: 'default',
        workspacePath: '/w',
        serverTicketId: 'T',
        schedulable: true,
      });
      tx.tasks.claim(TASK);
      tx.tasks.markRunning(TASK, { sessionId: 's' });
      tx.asks.publish('w0', [
        {
          id: 'ask-1',
          taskId: TASK,
          tool: 'Bash',
          summary: 'npm install',
          input: 'npm install',
          askedAt: clock.now(),
          deadlineAt: clock.now() + 600_000,
        },
      ]);
    });
  });
  afterEach(async () => {
    for (const s of senders.splice(0)) await s.dispose();
    await store.close();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function sender(over: Partial<AwayNotificationsOptions> = {}): AwayNotifications {
    const away = new AwayNotifications({
      store,
      windowId: 'w0',
      isLeader: () => true,
      clock,
      timers: recordedTimers(),
      target: async () => ({ kind: 'webhook', url: `${receiver.origin}/hook/topic` }),
      enabled: () => true,
      timeZone: () => Intl.DateTimeFormat().resolvedOptions().timeZone,
      ...over,
    });
    senders.push(away);
    return away;
  }

  const asked: NotifyEvent = {
    kind: 'needs-input',
    taskId: TASK,
    title: 'Fix the parser',
    folder: '/w',
    askId: 'ask-1',
    tool: 'Bash',
    question: '',
  };
  const key = notifyKeys.question(TASK, 'ask-1');
  /** The user answers in the panel: the question leaves the shared asks (the asking window withdraws it). */
  const answer = () => store.mutate((tx) => tx.asks.publish('w0', []));

  it('item 7: a question answered within the grace while a window has focus is never pushed', async () => {
    const away = sender({ presence: () => true, questionGraceMs: 60_000 });
    await away.enqueue(key, asked);
    await away.idle();
    assert.equal(receiver.posts.length, 0, 'not pushed while the user is at a window');
    clock.advance(20_000);
    await answer();
    clock.advance(40_000);
    away.kick();
    await away.idle();
    assert.equal(receiver.posts.length, 0, 'answered within the grace: never pushed');
    assert.deepEqual(
      store.read((tx) => tx.notify.due()),
      [],
      'and nothing is left to send',
    );
  });

  it('item 7: a question still open when the grace ends is pushed then; with no window focused, at once', async () => {
    const present = sender({ presence: () => true, questionGraceMs: 60_000 });
    await present.enqueue(key, asked);
    await present.idle();
    assert.equal(receiver.posts.length, 0);
    clock.advance(60_000);
    present.kick();
    await present.idle();
    assert.equal(receiver.posts.length, 1, 'unanswered after the grace: pushed');
    assert.equal(WebhookPayloadSchema.parse(receiver.posts[0].json).event, 'needs-input');

    const away = sender({ presence: () => false, questionGraceMs: 60_000 });
    await away.enqueue(notifyKeys.question(TASK, 'ask-2'), { ...asked, askId: 'ask-2' });
    await store.mutate((tx) =>
      tx.asks.publish('w0', [
        { id: 'ask-2', taskId: TASK, tool: 'Bash', summary: 'x', input: 'x', askedAt: clock.now(), deadlineAt: clock.now() + 1 },
      ]),
    );
    away.kick();
    await away.idle();
    assert.equal(receiver.posts.length, 2, 'nobody at a window: pushed at once');
  });

  it('item 7: the short id a notification names is the one the card shows', async () => {
    const card = store.read((tx) => toTaskCard(tx.tasks.get(TASK)!, []));
    assert.equal(card.shortId, '4ea89496');
    const text = messageOf(asked, INCLUDE_NOTHING, () => '07:00').text;
    assert.ok(text.startsWith(`Task ${card.shortId} `), text);
  });
});
