/**
 * The ticket rules (src/service/ticket-rules.ts, src/service/lifecycle-rules.ts), one test per rule and branch, applied inside
 * transactions of a real sql.js store file. No gateway: the answers are the protocol's own shapes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import type { OffPeakTask, TicketRecord } from '../../src/core/types';
import type { TakeResult } from '../../src/gateway-client/client';
import { GatewayError } from '../../src/gateway-client/errors';
import type { TicketStatusEntry } from '../../src/protocol/gateway';
import {
  RETAKE_FAILED,
  acknowledgeSettle,
  applyStatusEntry,
  attachRetakenTicket,
  continueTask,
  insertTakenTask,
  ledgerRowOfTake,
  orphanTicket,
  queueSettlesForTask,
  retireDeadTicket,
  settleAcknowledgedBy,
  settleReasonForEndedTask,
  settleReasonOf,
  type CreateTaskInput,
  type StatusRuleContext,
} from '../../src/service/ticket-rules';
import {
  cancelTask,
  deleteTask,
  expireSegment,
  finishTask,
  interruptSegment,
  recoverInterruptedTask,
  startSegment,
} from '../../src/service/lifecycle-rules';
import { TaskStore, type StoreTx } from '../../src/store';

const NOW = 1_000_000;
/** The gateway's clock runs 1 s ahead of ours. */
const SKEW = 1_000;
const FORM: CreateTaskInput = { title: 't', prompt: 'p', permissionMode: 'default', workspacePath: '/ws' };
/** Polls again after the hint, doubled for a queued ticket (so the state that asked is visible). */
const ctx: StatusRuleContext = {
  pollDelay: (state, hint) => (state === 'queued' ? hint * 2 : hint),
  fallbackPollMs: 300_000,
  toLocal: (ms) => (ms === null || ms === undefined ? undefined : ms - SKEW),
};

function take(state: TakeResult['state'], ticketId = 'K1', extra: Partial<TakeResult> = {}): TakeResult {
  return { ticketId, taskId: 'T', state, position: state === 'queued' ? 3 : null, nextPollAfterMs: 1_000, reused: false, ...extra };
}

const queued = (ticketId: string, position = 2, hint: number | null = 500): TicketStatusEntry => ({
  ticket_id: ticketId,
  task_id: 'T',
  state: 'queued',
  position,
  taken_at: 1,
  next_poll_after_ms: hint,
});
const ready = (ticketId: string): TicketStatusEntry => ({
  ticket_id: ticketId,
  task_id: 'T',
  state: 'ready',
  taken_at: 1,
  ready_at: 2,
  ready_deadline: NOW + 60_000,
  next_poll_after_ms: 500,
});
const active = (ticketId: string): TicketStatusEntry => ({
  ticket_id: ticketId,
  task_id: 'T',
  state: 'active',
  taken_at: 1,
  ready_at: 2,
  active_at: 3,
  active_until: NOW + 3_600_000,
  next_poll_after_ms: 500,
});
const expired = (ticketId: string): TicketStatusEntry => ({
  ticket_id: ticketId,
  task_id: 'T',
  state: 'expired',
  taken_at: 1,
  expired_at: 2,
  expired_from: 'active',
  next_poll_after_ms: null,
});
const settled = (ticketId: string): TicketStatusEntry => ({
  ticket_id: ticketId,
  task_id: 'T',
  state: 'settled',
  taken_at: 1,
  settled_at: 2,
  reason: 'completed',
  next_poll_after_ms: null,
});
const notFound = (ticketId: string): TicketStatusEntry => ({ ticket_id: ticketId, state: 'not_found', next_poll_after_ms: null });

describe('ticket rules (pure functions over a store transaction)', () => {
  let dir: string;
  let clock: ManualClock;
  let store: TaskStore;
  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'offpeak-ticket-rules-'));
    clock = new ManualClock(NOW);
    store = await TaskStore.open({ directory: dir, clock, watch: false, durable: false });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const tx = <T>(fn: (tx: StoreTx) => T): Promise<T> => store.mutate(fn);
  const task = (id = 'T'): OffPeakTask | undefined => store.read((r) => r.tasks.get(id));
  const ticket = (id = 'K1'): TicketRecord | undefined => store.read((r) => r.tickets.get(id));

  /** A queued task holding ticket `ticketId` (in `serverState`), optionally moved on to `status`. */
  async function givenTask(
    options: {
      id?: string;
      ticketId?: string;
      serverState?: TicketRecord['serverState'];
      schedulable?: boolean;
      status?: 'paused' | 'running' | 'completed' | 'cancelled';
    } = {},
  ): Promise<void> {
    const id = options.id ?? 'T';
    const ticketId = options.ticketId ?? 'K1';
    await tx((t) => {
      t.tickets.insert({ ticketId, taskId: id, serverState: options.serverState ?? 'queued' });
      t.tasks.insert({ id, ...FORM, serverTicketId: ticketId, schedulable: options.schedulable ?? false, nextPollAt: NOW });
    });
    if (options.status === 'paused') await tx((t) => t.tasks.pause(id));
    if (options.status === 'running' || options.status === 'completed') await run(id, ticketId);
    if (options.status === 'completed') await tx((t) => t.tasks.complete(id));
    if (options.status === 'cancelled') await tx((t) => t.tasks.cancel(id));
  }

  /** Claim and start the task on its ticket, as the runtime does. */
  async function run(id = 'T', ticketId = 'K1'): Promise<void> {
    await tx((t) => {
      t.tasks.setTicket(id, ticketId, { schedulable: true });
      assert.ok(t.tasks.claim(id), 'claimed');
      assert.ok(startSegment(t, id, ticketId, 'S1'), 'started');
    });
  }

  describe('settle answers', () => {
    it('settleAcknowledgedBy: a 4xx other than 401/403/408/429 acknowledges the settle', () => {
      const e = (status: number) => new GatewayError('rejected', 'settle', undefined, { status });
      assert.equal(settleAcknowledgedBy(e(404)), true);
      assert.equal(settleAcknowledgedBy(e(409)), true);
    });

    it('settleAcknowledgedBy: auth, timeout, rate-limit, 5xx, non-4xx and status-less failures are retried', () => {
      const e = (status: number | undefined) =>
        new GatewayError(status && status >= 500 ? 'server_error' : 'rejected', 'settle', undefined, { status });
      assert.deepEqual(
        [401, 403, 408, 429, 500, 302, undefined].map((s) => settleAcknowledgedBy(e(s))),
        [false, false, false, false, false, false, false],
      );
    });

    it('settleReasonOf: a stored reason the protocol knows is sent as it is', () => {
      assert.equal(settleReasonOf('segment_end'), 'segment_end');
    });

    it("settleReasonOf: a missing or unknown stored reason is sent as 'abandoned'", () => {
      assert.deepEqual([settleReasonOf(null), settleReasonOf('not_found')], ['abandoned', 'abandoned']);
    });

    it('settleReasonForEndedTask: deleted (no row), completed, failed, and cancelled for any other state', () => {
      assert.deepEqual(
        [undefined, { status: 'completed' as const }, { status: 'failed' as const }, { status: 'cancelled' as const }].map((t) =>
          settleReasonForEndedTask(t),
        ),
        ['deleted', 'completed', 'failed', 'cancelled'],
      );
    });
  });

  describe('take answers (create)', () => {
    it('ledgerRowOfTake: a queued take keeps its position and is polled after the paced hint', async () => {
      const row = await tx((t) => ledgerRowOfTake(t, 'T', take('queued'), ctx.pollDelay));
      assert.deepEqual(row, { ticketId: 'K1', taskId: 'T', serverState: 'queued', queuePosition: 3, nextPollAt: NOW + 2_000 });
    });

    it('ledgerRowOfTake: a ready take has no position', async () => {
      const row = await tx((t) => ledgerRowOfTake(t, 'T', take('ready'), ctx.pollDelay));
      assert.deepEqual([row.queuePosition, row.nextPollAt], [null, NOW + 1_000]);
    });

    it('ledgerRowOfTake: a dead take is never polled', async () => {
      const row = await tx((t) => ledgerRowOfTake(t, 'T', take('expired'), ctx.pollDelay));
      assert.equal(row.nextPollAt, null);
    });

    it('insertTakenTask: a queued take gives a queued, unschedulable task holding the ticket, with the form as typed', async () => {
      await tx((t) => t.tickets.insert(ledgerRowOfTake(t, 'T', take('queued'), ctx.pollDelay)));
      const inserted = await tx((t) =>
        insertTakenTask(t, 'T', { ...FORM, model: 'm1', thoughtLevel: 'high', workspaceIdentity: 'wid' }, take('queued'), ctx.pollDelay),
      );
      assert.deepEqual(
        [
          inserted.status,
          inserted.serverTicketId,
          inserted.registeredAt,
          inserted.schedulable,
          inserted.queuePosition,
          inserted.nextPollAt,
        ],
        ['queued', 'K1', NOW, false, 3, NOW + 2_000],
      );
      assert.deepEqual([inserted.model, inserted.thoughtLevel, inserted.workspaceIdentity], ['m1', 'high', 'wid']);
    });

    it('insertTakenTask: a ready take gives a schedulable task; unset optional fields are stored as null', async () => {
      await tx((t) => t.tickets.insert(ledgerRowOfTake(t, 'T', take('ready'), ctx.pollDelay)));
      const inserted = await tx((t) => insertTakenTask(t, 'T', FORM, take('ready'), ctx.pollDelay));
      assert.deepEqual(
        [inserted.schedulable, inserted.queuePosition, inserted.model, inserted.thoughtLevel, inserted.workspaceIdentity],
        [true, null, null, null, null],
      );
    });

    it('insertTakenTask: a dead take gives a ticketless task and retires the ticket (settle requested)', async () => {
      await tx((t) => t.tickets.insert(ledgerRowOfTake(t, 'T', take('expired'), ctx.pollDelay)));
      const inserted = await tx((t) => insertTakenTask(t, 'T', FORM, take('expired'), ctx.pollDelay));
      assert.deepEqual([inserted.serverTicketId, inserted.registeredAt, inserted.nextPollAt], [null, null, null]);
      assert.deepEqual([ticket()!.settleState, ticket()!.settleReason, ticket()!.endReason], ['pending', 'segment_end', 'expired']);
    });

    it('orphanTicket: a ticket whose task row could not be written ends as an orphan and goes to the outbox', async () => {
      await tx((t) => t.tickets.insert({ ticketId: 'K1', taskId: 'T', serverState: 'queued' }));
      await tx((t) => orphanTicket(t, 'K1', 'disk full'));
      assert.deepEqual(
        [ticket()!.endReason, ticket()!.lastError, ticket()!.settleState, ticket()!.settleReason],
        ['orphan', 'disk full', 'pending', 'orphan'],
      );
    });
  });

  describe('status entries (applyStatusEntry)', () => {
    it('a ticket the ledger does not know is recorded before the entry is applied', async () => {
      await tx((t) => t.tasks.insert({ id: 'T', ...FORM, serverTicketId: 'K1' }));
      const r = await tx((t) => applyStatusEntry(t, 'T', queued('K1'), ctx));
      assert.equal(r, 'none');
      assert.deepEqual([ticket()!.taskId, ticket()!.serverState, ticket()!.queuePosition], ['T', 'queued', 2]);
    });

    it('queued, current ticket: ledger and task take the position; unschedulable; polled after the paced hint', async () => {
      await givenTask({ schedulable: true });
      assert.equal(await tx((t) => applyStatusEntry(t, 'T', queued('K1', 7), ctx)), 'none');
      assert.deepEqual([task()!.schedulable, task()!.queuePosition, task()!.nextPollAt], [false, 7, NOW + 1_000]);
      assert.equal(ticket()!.queuePosition, 7);
    });

    it('queued without a hint: polled after the fallback', async () => {
      await givenTask();
      await tx((t) => applyStatusEntry(t, 'T', queued('K1', 2, null), ctx));
      assert.equal(task()!.nextPollAt, NOW + 2 * ctx.fallbackPollMs);
    });

    it("queued, not the task's current ticket: only the ledger records it", async () => {
      await givenTask();
      await tx((t) => t.tickets.insert({ ticketId: 'OLD', taskId: 'T', serverState: 'queued' }));
      await tx((t) => applyStatusEntry(t, 'T', queued('OLD', 9), ctx));
      assert.equal(store.read((r) => r.tickets.get('OLD'))!.queuePosition, 9);
      assert.equal(task()!.queuePosition, null);
    });

    it('ready, queued task not yet schedulable: schedulable now, deadline on the local clock, the scheduler is woken', async () => {
      await givenTask();
      assert.equal(await tx((t) => applyStatusEntry(t, 'T', ready('K1'), ctx)), 'woke');
      assert.equal(task()!.schedulable, true);
      assert.deepEqual([ticket()!.serverState, ticket()!.readyDeadline], ['ready', NOW + 60_000 - SKEW]);
    });

    it('ready, queued task already schedulable: nothing to wake', async () => {
      await givenTask({ schedulable: true });
      assert.equal(await tx((t) => applyStatusEntry(t, 'T', ready('K1'), ctx)), 'none');
    });

    it('ready, running task: schedulable recorded, nothing to wake', async () => {
      await givenTask({ status: 'running' });
      assert.equal(await tx((t) => applyStatusEntry(t, 'T', ready('K1'), ctx)), 'none');
      assert.equal(task()!.status, 'running');
    });

    it('ready, terminal task: only the ledger records it', async () => {
      await givenTask({ status: 'cancelled' });
      assert.equal(await tx((t) => applyStatusEntry(t, 'T', ready('K1'), ctx)), 'none');
      assert.equal(ticket()!.serverState, 'ready');
      assert.equal(task()!.schedulable, false);
    });

    it('active, queued task (requeued after a restart): schedulable again at once, expiry on the local clock, woken', async () => {
      await givenTask();
      assert.equal(await tx((t) => applyStatusEntry(t, 'T', active('K1'), ctx)), 'woke');
      assert.deepEqual([task()!.schedulable, task()!.queuePosition], [true, null]);
      assert.deepEqual([ticket()!.serverState, ticket()!.expiresAt], ['active', NOW + 3_600_000 - SKEW]);
    });

    it('active, queued task already schedulable: nothing to wake', async () => {
      await givenTask({ schedulable: true });
      assert.equal(await tx((t) => applyStatusEntry(t, 'T', active('K1'), ctx)), 'none');
    });

    it('active, running task: only the position is cleared (schedulable untouched)', async () => {
      await givenTask({ status: 'running' });
      await tx((t) => t.tasks.applySnapshot('T', 'K1', { schedulable: false }));
      assert.equal(await tx((t) => applyStatusEntry(t, 'T', active('K1'), ctx)), 'none');
      assert.deepEqual([task()!.status, task()!.schedulable, task()!.queuePosition], ['running', false, null]);
    });

    it('active, task row gone: only the ledger records it', async () => {
      await tx((t) => t.tickets.insert({ ticketId: 'K1', taskId: 'T', serverState: 'ready' }));
      assert.equal(await tx((t) => applyStatusEntry(t, 'T', active('K1'), ctx)), 'none');
      assert.equal(ticket()!.serverState, 'active');
    });

    for (const [name, entry] of [
      ['expired', expired],
      ['settled', settled],
      ['not_found', notFound],
    ] as const) {
      it(`${name}, queued task: the ticket is retired and detached; the task is retaken`, async () => {
        await givenTask();
        assert.equal(await tx((t) => applyStatusEntry(t, 'T', entry('K1'), ctx)), 'retake');
        assert.equal(task()!.serverTicketId, null);
        assert.equal(ticket()!.serverState, name);
      });
    }

    for (const [name, entry] of [
      ['expired', expired],
      ['settled', settled],
      ['not_found', notFound],
    ] as const) {
      it(`item 3: ${name}, running task: only what the gateway said is recorded; the segment and the settle are left to the runtime's outcome`, async () => {
        await givenTask({ status: 'running' });
        assert.equal(await tx((t) => applyStatusEntry(t, 'T', entry('K1'), ctx)), 'none');
        assert.deepEqual([task()!.status, task()!.serverTicketId, task()!.nextPollAt], ['running', 'K1', null]);
        assert.deepEqual(
          [ticket()!.serverState, ticket()!.endReason, ticket()!.segmentEndedAt, ticket()!.settleState],
          [name, null, null, 'none'],
        );
        // The agent finished after all: the ticket ends and settles as completed.
        await tx((t) => finishTask(t, 'T', 'completed', {}));
        assert.deepEqual([ticket()!.endReason, ticket()!.settleReason], ['completed', 'completed']);
      });
    }

    it('expired, paused task: kept (Continue retakes), no longer polled nor schedulable', async () => {
      await givenTask({ status: 'paused', schedulable: true });
      assert.equal(await tx((t) => applyStatusEntry(t, 'T', expired('K1'), ctx)), 'none');
      assert.deepEqual([task()!.serverTicketId, task()!.schedulable, task()!.nextPollAt], ['K1', false, null]);
    });

    it('expired, not the current ticket: retired in the ledger only', async () => {
      await givenTask({ status: 'completed' });
      assert.equal(await tx((t) => applyStatusEntry(t, 'T', expired('K1'), ctx)), 'none');
      assert.equal(ticket()!.serverState, 'expired');
      assert.equal(task()!.status, 'completed');
    });
  });

  describe('retireDeadTicket', () => {
    beforeEach(async () => {
      await tx((t) => t.tickets.insert({ ticketId: 'K1', taskId: 'T', serverState: 'active', nextPollAt: NOW }));
    });

    it('settled: the gateway released it already, so the outbox row is settled without a request', async () => {
      await tx((t) => retireDeadTicket(t, 'K1', 'settled'));
      assert.deepEqual(
        [ticket()!.serverState, ticket()!.settleState, ticket()!.endReason, ticket()!.nextPollAt],
        ['settled', 'settled', 'retaken', null],
      );
    });

    it('not_found: nothing left to release, the settle is abandoned', async () => {
      await tx((t) => retireDeadTicket(t, 'K1', 'not_found'));
      assert.deepEqual(
        [ticket()!.serverState, ticket()!.settleState, ticket()!.settleReason, ticket()!.endReason],
        ['not_found', 'abandoned', 'not_found', 'retaken'],
      );
    });

    it('expired: settled through the outbox, the segment ended by expiry', async () => {
      await tx((t) => retireDeadTicket(t, 'K1', 'expired'));
      assert.deepEqual(
        [ticket()!.serverState, ticket()!.settleState, ticket()!.settleReason, ticket()!.endReason],
        ['expired', 'pending', 'segment_end', 'expired'],
      );
    });

    it('state unknown: settled through the outbox to be sure, server state left as it was', async () => {
      await tx((t) => retireDeadTicket(t, 'K1', undefined));
      assert.deepEqual(
        [ticket()!.serverState, ticket()!.settleState, ticket()!.settleReason, ticket()!.endReason],
        ['active', 'pending', 'segment_end', 'retaken'],
      );
    });
  });

  describe('continueTask', () => {
    it('a task that is not paused is refused and nothing changes', async () => {
      await givenTask();
      assert.equal(await tx((t) => continueTask(t, 'T', 'K1', undefined, false, ctx)), false);
      assert.deepEqual([task()!.status, task()!.serverTicketId], ['queued', 'K1']);
    });

    it('alive ticket with a fresh status entry: queued again, the entry applied, the ticket kept', async () => {
      await givenTask({ status: 'paused' });
      assert.equal(await tx((t) => continueTask(t, 'T', 'K1', ready('K1'), true, ctx)), true);
      assert.deepEqual([task()!.status, task()!.serverTicketId, task()!.schedulable], ['queued', 'K1', true]);
    });

    it('alive without an entry (the status check failed): queued again with the ticket as it was', async () => {
      await givenTask({ status: 'paused' });
      assert.equal(await tx((t) => continueTask(t, 'T', 'K1', undefined, true, ctx)), true);
      assert.deepEqual([task()!.status, task()!.serverTicketId, ticket()!.settleState], ['queued', 'K1', 'none']);
    });

    it('dead per the entry: the entry retires it, the ticket is detached', async () => {
      await givenTask({ status: 'paused' });
      await tx((t) => continueTask(t, 'T', 'K1', expired('K1'), false, ctx));
      assert.equal(task()!.serverTicketId, null);
      assert.deepEqual([ticket()!.serverState, ticket()!.endReason], ['expired', 'expired']);
    });

    it('dead per the ledger (no entry asked): retired as unknown, detached', async () => {
      await givenTask({ status: 'paused' });
      await tx((t) => continueTask(t, 'T', 'K1', undefined, false, ctx));
      assert.equal(task()!.serverTicketId, null);
      assert.deepEqual([ticket()!.settleState, ticket()!.endReason], ['pending', 'retaken']);
    });

    it('no ticket at all: queued again, ticketless', async () => {
      await tx((t) => t.tasks.insert({ id: 'T', ...FORM }));
      await tx((t) => t.tasks.pause('T'));
      assert.equal(await tx((t) => continueTask(t, 'T', null, undefined, false, ctx)), true);
      assert.deepEqual([task()!.status, task()!.serverTicketId], ['queued', null]);
    });
  });

  describe('attachRetakenTicket', () => {
    async function ticketless(status?: 'paused'): Promise<void> {
      await tx((t) => t.tasks.insert({ id: 'T', ...FORM }));
      if (status) await tx((t) => t.tasks.pause('T'));
      await tx((t) => t.tasks.setLastError('T', `${RETAKE_FAILED} down`, { onlyWithoutTicket: true }));
    }

    it('queued answer: attached, position and paced poll recorded, the retake error cleared', async () => {
      await ticketless();
      assert.equal(await tx((t) => attachRetakenTicket(t, 'T', take('queued'), ctx.pollDelay)), 'attached');
      assert.deepEqual(
        [task()!.serverTicketId, task()!.queuePosition, task()!.nextPollAt, task()!.lastError],
        ['K1', 3, NOW + 2_000, null],
      );
    });

    it('ready answer for a queued task: attached and schedulable, the scheduler should look', async () => {
      await ticketless();
      assert.equal(await tx((t) => attachRetakenTicket(t, 'T', take('ready'), ctx.pollDelay)), 'ready');
      assert.equal(task()!.schedulable, true);
    });

    it('ready answer for a paused task: attached, nothing to wake', async () => {
      await ticketless('paused');
      assert.equal(await tx((t) => attachRetakenTicket(t, 'T', take('ready'), ctx.pollDelay)), 'attached');
    });

    it('a different ticket replaces the previous one, which is retired', async () => {
      await givenTask();
      assert.equal(await tx((t) => attachRetakenTicket(t, 'T', take('queued', 'K2'), ctx.pollDelay)), 'attached');
      assert.equal(task()!.serverTicketId, 'K2');
      assert.deepEqual([ticket('K1')!.settleState, ticket('K1')!.endReason], ['pending', 'retaken']);
    });

    it('the same live ticket handed back (retry-safe take): its state is refreshed, the task keeps it', async () => {
      await givenTask();
      assert.equal(await tx((t) => attachRetakenTicket(t, 'T', take('ready', 'K1'), ctx.pollDelay)), 'ready');
      assert.deepEqual([ticket()!.serverState, ticket()!.settleState, task()!.serverTicketId], ['ready', 'none', 'K1']);
    });

    it('a ticket we had given up, handed back live for this task: revived and attached', async () => {
      await givenTask();
      await tx((t) => {
        retireDeadTicket(t, 'K1', 'not_found');
        t.tasks.clearTicket('T', 'K1');
      });
      assert.equal(await tx((t) => attachRetakenTicket(t, 'T', take('queued', 'K1'), ctx.pollDelay)), 'attached');
      assert.deepEqual(
        [ticket()!.settleState, ticket()!.endReason, ticket()!.serverState, task()!.serverTicketId],
        ['none', null, 'queued', 'K1'],
      );
    });

    it("another task's retired ticket: conflict, nothing attached", async () => {
      await givenTask({ id: 'OTHER' });
      await tx((t) => retireDeadTicket(t, 'K1', 'expired'));
      await ticketless();
      assert.equal(await tx((t) => attachRetakenTicket(t, 'T', take('queued', 'K1'), ctx.pollDelay)), 'conflict');
      assert.equal(task()!.serverTicketId, null);
    });

    it('our own retired ticket handed back dead: conflict, nothing revived', async () => {
      await givenTask();
      await tx((t) => {
        retireDeadTicket(t, 'K1', 'expired');
        t.tasks.clearTicket('T', 'K1');
      });
      assert.equal(await tx((t) => attachRetakenTicket(t, 'T', take('expired', 'K1'), ctx.pollDelay)), 'conflict');
      assert.equal(ticket()!.settleState, 'pending');
    });

    it('a dead answer for a fresh ticket: recorded and retired, the task stays ticketless', async () => {
      await ticketless();
      assert.equal(await tx((t) => attachRetakenTicket(t, 'T', take('expired'), ctx.pollDelay)), 'dead');
      assert.equal(task()!.serverTicketId, null);
      assert.equal(ticket()!.settleState, 'pending');
    });

    it('the task was cancelled while the take was in flight: the ticket goes to the outbox as cancelled', async () => {
      await ticketless();
      await tx((t) => t.tasks.cancel('T'));
      assert.equal(await tx((t) => attachRetakenTicket(t, 'T', take('queued'), ctx.pollDelay)), 'gone');
      assert.deepEqual([ticket()!.settleState, ticket()!.settleReason], ['pending', 'cancelled']);
    });

    it('the task was deleted while the take was in flight: the ticket goes to the outbox as deleted', async () => {
      assert.equal(await tx((t) => attachRetakenTicket(t, 'T', take('queued'), ctx.pollDelay)), 'gone');
      assert.deepEqual([ticket()!.settleState, ticket()!.settleReason], ['pending', 'deleted']);
    });
  });

  describe('settle outbox bookkeeping', () => {
    it('queueSettlesForTask: ends the open segment with the terminal reason and queues unsettled tickets; pending ones are listed once', async () => {
      await givenTask({ status: 'running' });
      await tx((t) => {
        t.tickets.insert({ ticketId: 'K0', taskId: 'T', serverState: 'expired' });
        t.tickets.requestSettle('K0', 'segment_end');
        t.tickets.insert({ ticketId: 'KS', taskId: 'T', serverState: 'settled' });
        t.tickets.markSettled('KS');
      });
      const ids = await tx((t) => queueSettlesForTask(t, 'T', 'completed'));
      assert.deepEqual(ids.sort(), ['K0', 'K1']);
      assert.deepEqual(
        [ticket()!.endReason, ticket()!.settleReason, ticket('K0')!.settleReason],
        ['completed', 'completed', 'segment_end'],
      );
    });

    it("queueSettlesForTask: a non-terminal reason ends the open segment as 'interrupted'", async () => {
      await givenTask({ status: 'running' });
      await tx((t) => queueSettlesForTask(t, 'T', 'abandoned'));
      assert.deepEqual([ticket()!.endReason, ticket()!.settleReason], ['interrupted', 'abandoned']);
    });

    it('acknowledgeSettle: the last open ticket of a terminal task settles the task too', async () => {
      await givenTask({ status: 'completed' });
      await tx((t) => queueSettlesForTask(t, 'T', 'completed'));
      await tx((t) => acknowledgeSettle(t, { ticketId: 'K1', taskId: 'T' }));
      assert.equal(ticket()!.settleState, 'settled');
      assert.equal(task()!.settledAt, NOW);
    });

    it('acknowledgeSettle: a terminal task with another ticket still open is not settled yet', async () => {
      await givenTask({ status: 'completed' });
      await tx((t) => {
        t.tickets.insert({ ticketId: 'K2', taskId: 'T', serverState: 'queued' });
        queueSettlesForTask(t, 'T', 'completed');
      });
      await tx((t) => acknowledgeSettle(t, { ticketId: 'K1', taskId: 'T' }));
      assert.equal(task()!.settledAt, null);
    });

    it('acknowledgeSettle: a live task (a retaken ticket settled) stays unsettled', async () => {
      await givenTask();
      await tx((t) => acknowledgeSettle(t, { ticketId: 'K1', taskId: 'T' }));
      assert.equal(ticket()!.settleState, 'settled');
      assert.equal(task()!.settledAt, null);
    });

    it("acknowledgeSettle: a deleted task's ticket goes once settled, with its other finished ones; one still pending stays", async () => {
      await tx((t) => {
        t.tickets.insert({ ticketId: 'K1', taskId: 'GONE', serverState: 'queued' });
        t.tickets.insert({ ticketId: 'K2', taskId: 'GONE', serverState: 'queued' });
        t.tickets.insert({ ticketId: 'K3', taskId: 'GONE', serverState: 'queued' });
        t.tickets.abandonSettle('K2', 'not_found');
        t.tickets.requestSettle('K3', 'deleted');
      });
      await tx((t) => acknowledgeSettle(t, { ticketId: 'K1', taskId: 'GONE' }));
      assert.deepEqual([ticket('K1'), ticket('K2')], [undefined, undefined]);
      assert.equal(ticket('K3')!.settleState, 'pending', 'the outbox still has it to settle');
      await tx((t) => acknowledgeSettle(t, { ticketId: 'K3', taskId: 'GONE' }));
      assert.equal(ticket('K3'), undefined);
    });
  });

  describe('lifecycle transitions', () => {
    it('startSegment: a claimed queued task becomes running with its session, and the segment starts', async () => {
      await givenTask();
      await run();
      assert.deepEqual([task()!.status, task()!.sessionId, task()!.startedAt, ticket()!.segmentStartedAt], ['running', 'S1', NOW, NOW]);
    });

    it('startSegment: refused for a task that is not claimed (paused or cancelled meanwhile); the segment does not start', async () => {
      await givenTask({ status: 'cancelled' });
      assert.equal(await tx((t) => startSegment(t, 'T', 'K1', 'S1')), false);
      assert.equal(ticket()!.segmentStartedAt, null);
    });

    it('interruptSegment: back to queued with the same session and ticket, the segment ended as interrupted', async () => {
      await givenTask({ status: 'running' });
      assert.equal(await tx((t) => interruptSegment(t, 'T', 'K1')), true);
      assert.deepEqual(
        [task()!.status, task()!.sessionId, task()!.serverTicketId, ticket()!.endReason, ticket()!.settleState],
        ['queued', 'S1', 'K1', 'interrupted', 'none'],
      );
    });

    it("interruptSegment without a ticket named (start-up recovery): the task's own ticket ends its segment", async () => {
      await givenTask({ status: 'running' });
      assert.equal(await tx((t) => interruptSegment(t, 'T')), true);
      assert.deepEqual([task()!.status, ticket()!.endReason], ['queued', 'interrupted']);
    });

    it('startSegment after interruptSegment on the same ticket: the segment is open again (started_at kept), so its real end is what it records', async () => {
      await givenTask({ status: 'running' });
      await tx((t) => interruptSegment(t, 'T', 'K1'));
      await run();
      assert.deepEqual(
        [task()!.status, ticket()!.segmentStartedAt, ticket()!.segmentEndedAt, ticket()!.endReason],
        ['running', NOW, null, null],
      );
      await tx((t) => t.tickets.endSegment('K1', 'completed'));
      assert.equal(ticket()!.endReason, 'completed');
    });

    it('startSegment on a ticket whose segment really ended (expired): the ended segment is not reopened', async () => {
      await givenTask({ status: 'running' });
      await tx((t) => t.tickets.endSegment('K1', 'expired'));
      await tx((t) => t.tickets.startSegment('K1'));
      assert.equal(ticket()!.endReason, 'expired');
    });

    it('interruptSegment: a running task without a ticket is requeued, no segment to end', async () => {
      await givenTask({ status: 'running' });
      await tx((t) => t.tasks.clearTicket('T'));
      assert.equal(await tx((t) => interruptSegment(t, 'T')), true);
      assert.deepEqual([task()!.status, ticket()!.endReason], ['queued', null]);
    });

    it('interruptSegment: a task that is no longer running is left alone, its segment untouched', async () => {
      await givenTask({ status: 'completed' });
      assert.equal(await tx((t) => interruptSegment(t, 'T', 'K1')), false);
      assert.deepEqual([task()!.status, ticket()!.endReason], ['completed', null]);
    });

    it('expireSegment: a running task is requeued without its ticket (session and started_at kept); the ticket goes to the outbox', async () => {
      await givenTask({ status: 'running' });
      assert.equal(await tx((t) => expireSegment(t, 'T', 'K1')), true);
      assert.deepEqual([task()!.status, task()!.serverTicketId, task()!.sessionId, task()!.startedAt], ['queued', null, 'S1', NOW]);
      assert.deepEqual(
        [ticket()!.endReason, ticket()!.serverState, ticket()!.settleState, ticket()!.settleReason],
        ['expired', 'expired', 'pending', 'segment_end'],
      );
    });

    it('expireSegment: a terminal task is left alone; the ticket still goes to the outbox', async () => {
      await givenTask({ status: 'completed' });
      assert.equal(await tx((t) => expireSegment(t, 'T', 'K1')), false);
      assert.equal(task()!.status, 'completed');
      assert.deepEqual([ticket()!.endReason, ticket()!.settleReason], ['expired', 'segment_end']);
    });

    it('expireSegment: a deleted task only retires the ticket', async () => {
      await tx((t) => t.tickets.insert({ ticketId: 'K1', taskId: 'GONE', serverState: 'active' }));
      assert.equal(await tx((t) => expireSegment(t, 'GONE', 'K1')), false);
      assert.equal(ticket()!.settleState, 'pending');
    });

    it('expireSegment: a paused task (it cannot be requeued) keeps its state and reports no retake', async () => {
      await givenTask({ status: 'paused' });
      assert.equal(await tx((t) => expireSegment(t, 'T', 'K1')), false);
      assert.equal(task()!.status, 'paused');
    });

    it('finishTask completed: running -> completed, the tickets into the outbox', async () => {
      await givenTask({ status: 'running' });
      assert.deepEqual(await tx((t) => finishTask(t, 'T', 'completed', { filesChanged: 2 })), { applied: true, settles: ['K1'] });
      assert.deepEqual([task()!.status, task()!.filesChanged, ticket()!.endReason], ['completed', 2, 'completed']);
    });

    it('finishTask failed: a queued task that cannot run fails with its reason', async () => {
      await givenTask();
      assert.deepEqual(await tx((t) => finishTask(t, 'T', 'failed', { failureReason: 'workspace gone' })), {
        applied: true,
        settles: ['K1'],
      });
      assert.deepEqual([task()!.status, task()!.failureReason, ticket()!.settleReason], ['failed', 'workspace gone', 'failed']);
    });

    it('finishTask: refused for a task that cannot take the outcome; nothing is queued', async () => {
      await givenTask({ status: 'cancelled' });
      assert.deepEqual(await tx((t) => finishTask(t, 'T', 'completed', {})), { applied: false, settles: [] });
    });

    it('recoverInterruptedTask: a task with a live ticket is requeued on it (dispatched again at once)', async () => {
      await givenTask({ status: 'running', serverState: 'active' });
      assert.deepEqual(await tx((t) => recoverInterruptedTask(t, 'T')), { kind: 'requeued' });
      assert.deepEqual(
        [task()!.status, task()!.serverTicketId, ticket()!.endReason, ticket()!.settleState],
        ['queued', 'K1', 'interrupted', 'none'],
      );
    });

    for (const [why, given] of [
      ['the gateway said it expired', { serverState: 'expired' as const }],
      ['its active window ended by the ledger, not polled since', { serverState: 'active' as const, expiresAt: NOW - 1 }],
      ['its ready deadline passed before any admission', { serverState: 'ready' as const, readyDeadline: NOW - 1 }],
    ] as const) {
      it(`item 2: recoverInterruptedTask: a ticket that is over (${why}) is retired and detached; the task retakes now`, async () => {
        await givenTask({ status: 'running', serverState: given.serverState });
        await tx((t) => t.tickets.updateServerState('K1', given));
        assert.deepEqual(await tx((t) => recoverInterruptedTask(t, 'T')), { kind: 'retake', settle: ['K1'] });
        assert.deepEqual([task()!.status, task()!.serverTicketId, task()!.sessionId], ['queued', null, 'S1']);
        assert.deepEqual([ticket()!.endReason, ticket()!.settleState, ticket()!.settleReason], ['interrupted', 'pending', 'segment_end']);
      });
    }

    it('recoverInterruptedTask: a task that is no longer running is left alone', async () => {
      await givenTask({ status: 'completed' });
      assert.equal(await tx((t) => recoverInterruptedTask(t, 'T')), false);
    });

    it('cancelTask: a live task is cancelled and its tickets queued as cancelled', async () => {
      await givenTask({ status: 'running' });
      const r = await tx((t) => cancelTask(t, 'T'));
      assert.equal(r.kind, 'cancelled');
      assert.deepEqual(r.kind === 'cancelled' && [r.task.status, r.settles], ['cancelled', ['K1']]);
      assert.equal(ticket()!.endReason, 'cancelled');
    });

    it('cancelTask: a terminal task is returned as it is', async () => {
      await givenTask({ status: 'completed' });
      const r = await tx((t) => cancelTask(t, 'T'));
      assert.deepEqual(r.kind === 'terminal' && r.task.status, 'completed');
    });

    it('cancelTask: no such task', async () => {
      assert.deepEqual(await tx((t) => cancelTask(t, 'NONE')), { kind: 'not_found' });
    });

    it('deleteTask: the row goes, its unsettled tickets stay in the outbox as deleted', async () => {
      await givenTask();
      await tx((t) => {
        cancelTask(t, 'T');
        t.tickets.insert({ ticketId: 'K2', taskId: 'T', serverState: 'queued' });
      });
      assert.deepEqual(await tx((t) => deleteTask(t, 'T')), { settles: ['K1', 'K2'], deleted: true });
      assert.equal(task(), undefined);
      assert.deepEqual(
        [ticket('K1')!.settleReason, ticket('K2')!.settleState, ticket('K2')!.settleReason],
        ['cancelled', 'pending', 'deleted'],
      );
    });

    it('deleteTask: its tickets that need nothing more (settled, abandoned) go with it', async () => {
      await givenTask({ status: 'completed' });
      await tx((t) => {
        t.tickets.insert({ ticketId: 'K2', taskId: 'T', serverState: 'queued' });
        queueSettlesForTask(t, 'T', 'completed');
        t.tickets.markSettled('K1');
        t.tickets.abandonSettle('K2', 'not_found');
      });
      assert.deepEqual(await tx((t) => deleteTask(t, 'T')), { settles: [], deleted: true });
      assert.deepEqual([ticket('K1'), ticket('K2')], [undefined, undefined]);
    });

    it('deleteTask: a task that is not terminal is not deleted, and keeps its settled tickets', async () => {
      await givenTask();
      await tx((t) => {
        t.tickets.insert({ ticketId: 'K0', taskId: 'T', serverState: 'queued' });
        t.tickets.requestSettle('K0', 'retaken');
        t.tickets.markSettled('K0');
      });
      assert.equal((await tx((t) => deleteTask(t, 'T'))).deleted, false);
      assert.equal(ticket('K0')!.settleState, 'settled');
    });
  });
});
