/**
 * An independent model of what each store operation does to one task, used by the multi-process
 * and crash tests: workers predict `applied` with it, and the parent replays the acknowledged
 * operations with it to compute the exact expected final state of every task.
 * It is deliberately written from the transitions in docs/flows.md#task-states, not from src/core/task-state.ts.
 */
import type { StoreReadTx, StoreTx } from '../../../src/store';

export type ModelStatus = 'queued' | 'paused' | 'running' | 'completed' | 'failed' | 'cancelled';

export interface ModelTicket {
  serverState: string;
  settleState: 'none' | 'pending' | 'settled';
}

export interface ModelTask {
  id: string;
  status: ModelStatus;
  title: string;
  prompt: string;
  claimed: boolean;
  schedulable: boolean;
  ticket: string | null;
  ticketCount: number;
  deleted: boolean;
  tickets: Record<string, ModelTicket>;
}

export type Op =
  | { kind: 'create'; id: string }
  | {
      kind:
        | 'pause'
        | 'continue'
        | 'start'
        | 'requeue'
        | 'complete'
        | 'fail'
        | 'cancel'
        | 'ready'
        | 'retake'
        | 'delete'
        | 'settle'
        | 'ackSettle'
        | 'poll';
      id: string;
    }
  | { kind: 'edit'; id: string; title: string; prompt: string };

const TERMINAL: ModelStatus[] = ['completed', 'failed', 'cancelled'];
const isTerminal = (s: ModelStatus) => TERMINAL.includes(s);

export function newModelTask(id: string): ModelTask {
  const ticket = `${id}#1`;
  return {
    id,
    status: 'queued',
    title: `title ${id}`,
    prompt: `prompt ${id} `.padEnd(200, '.'),
    claimed: false,
    schedulable: false,
    ticket,
    ticketCount: 1,
    deleted: false,
    tickets: { [ticket]: { serverState: 'queued', settleState: 'none' } },
  };
}

/** Would the operation apply to this model task? */
export function expectApplied(t: ModelTask | undefined, op: Op): boolean {
  if (op.kind === 'create') return t === undefined;
  if (!t || t.deleted) return false;
  switch (op.kind) {
    case 'pause':
      return t.status === 'queued' && !t.claimed;
    case 'continue':
      return t.status === 'paused';
    // dispatchable: the gateway said ready, or the current ticket is still ready/active and live (an interrupted segment)
    case 'start': {
      const cur = t.ticket ? t.tickets[t.ticket] : undefined;
      const liveTicket = cur !== undefined && (cur.serverState === 'ready' || cur.serverState === 'active') && cur.settleState === 'none';
      return t.status === 'queued' && !t.claimed && (t.schedulable || liveTicket);
    }
    case 'requeue':
      return t.status === 'running';
    case 'complete':
      return t.status === 'running';
    case 'fail':
      return t.status === 'running' || t.status === 'queued';
    case 'cancel':
      return !isTerminal(t.status);
    case 'edit':
      return t.status === 'queued' || t.status === 'paused';
    case 'ready':
      return !isTerminal(t.status) && t.ticket !== null;
    case 'retake':
      return !isTerminal(t.status);
    case 'delete':
      return true;
    case 'settle':
      return t.ticket !== null && t.tickets[t.ticket].settleState === 'none';
    case 'ackSettle':
      return t.ticket !== null && t.tickets[t.ticket].settleState !== 'settled';
    case 'poll':
      return t.ticket !== null && t.tickets[t.ticket].serverState !== 'settled';
  }
}

/** Applies an operation that applied; returns the new model task (or a fresh one for create). */
export function applyToModel(t: ModelTask | undefined, op: Op): ModelTask {
  if (op.kind === 'create') return newModelTask(op.id);
  const m: ModelTask = structuredClone(t!);
  const cur = m.ticket ? m.tickets[m.ticket] : undefined;
  switch (op.kind) {
    case 'pause':
      m.status = 'paused';
      break;
    case 'continue':
      m.status = 'queued';
      break;
    case 'start':
      m.status = 'running';
      m.claimed = false;
      if (cur && (cur.serverState === 'queued' || cur.serverState === 'ready')) cur.serverState = 'active';
      break;
    case 'requeue':
      m.status = 'queued';
      m.schedulable = false;
      m.claimed = false;
      break;
    case 'complete':
    case 'fail':
    case 'cancel':
      m.status = op.kind === 'complete' ? 'completed' : op.kind === 'fail' ? 'failed' : 'cancelled';
      m.claimed = false;
      m.schedulable = false;
      break;
    case 'edit':
      m.title = op.title;
      m.prompt = op.prompt;
      break;
    case 'ready':
      m.schedulable = true;
      if (cur && cur.serverState !== 'settled') cur.serverState = 'ready';
      break;
    case 'retake': {
      m.ticketCount += 1;
      const id = `${m.id}#${m.ticketCount}`;
      m.tickets[id] = { serverState: 'queued', settleState: 'none' };
      m.ticket = id;
      m.schedulable = false;
      break;
    }
    case 'delete':
      m.deleted = true;
      m.status = isTerminal(m.status) ? m.status : 'cancelled';
      break;
    case 'settle':
      cur!.settleState = 'pending';
      break;
    case 'ackSettle':
      cur!.settleState = 'settled';
      cur!.serverState = 'settled';
      break;
    case 'poll':
      cur!.serverState = cur!.serverState === 'queued' ? 'queued' : cur!.serverState;
      break;
  }
  return m;
}

/** Performs the operation on the real store inside one transaction; returns whether it applied. */
export function perform(tx: StoreTx, op: Op, current: ModelTask | undefined): boolean {
  const id = op.id;
  switch (op.kind) {
    case 'create': {
      const ticket = `${id}#1`;
      // an id is never reused, also not after a delete (its ledger rows stay)
      if (tx.tasks.get(id) || tx.tickets.get(ticket)) return false;
      tx.tickets.insert({ ticketId: ticket, taskId: id, serverState: 'queued' });
      const m = newModelTask(id);
      tx.tasks.insert({
        id,
        title: m.title,
        prompt: m.prompt,
        permissionMode: 'acceptEdits',
        workspacePath: `/ws/${id.split('-')[0]}`,
        serverTicketId: ticket,
      });
      return true;
    }
    case 'pause':
      return tx.tasks.pause(id);
    case 'continue':
      return tx.tasks.continue(id);
    case 'start': {
      if (!tx.tasks.claim(id)) return false;
      const ok = tx.tasks.markRunning(id, { sessionId: `session-${id}` });
      const ticket = tx.tasks.get(id)?.serverTicketId;
      if (ok && ticket) tx.tickets.markAdmitted(ticket);
      return ok;
    }
    case 'requeue':
      return tx.tasks.requeue(id);
    case 'complete':
      return tx.tasks.complete(id, { filesChanged: 1 });
    case 'fail':
      return tx.tasks.fail(id, { failureReason: 'random failure' });
    case 'cancel':
      return tx.tasks.cancel(id);
    case 'edit':
      return tx.tasks.edit(id, { title: op.title, prompt: op.prompt });
    case 'ready': {
      const ticket = tx.tasks.get(id)?.serverTicketId;
      if (!ticket || !tx.tasks.applySnapshot(id, ticket, { schedulable: true, queuePosition: null })) return false;
      tx.tickets.updateServerState(ticket, { serverState: 'ready' });
      return true;
    }
    case 'retake': {
      const task = tx.tasks.get(id);
      if (!task) return false;
      const next = `${id}#${(current?.ticketCount ?? 0) + 1}`;
      if (!tx.tasks.setTicket(id, next)) return false;
      tx.tickets.insert({ ticketId: next, taskId: id, serverState: 'queued' });
      return true;
    }
    case 'delete': {
      tx.tasks.cancel(id);
      return tx.tasks.delete(id);
    }
    case 'settle': {
      const ticket = tx.tasks.get(id)?.serverTicketId;
      return ticket ? tx.tickets.requestSettle(ticket, 'random settle') : false;
    }
    case 'ackSettle': {
      const ticket = tx.tasks.get(id)?.serverTicketId;
      return ticket ? tx.tickets.markSettled(ticket) : false;
    }
    case 'poll': {
      const ticket = tx.tasks.get(id)?.serverTicketId;
      if (!ticket) return false;
      const state = tx.tickets.get(ticket)?.serverState ?? 'queued';
      return tx.tickets.updateServerState(ticket, { serverState: state, nextPollAt: tx.now + 1000 });
    }
  }
}

/** The store's view of a task in model terms, for comparing with the model. */
export function observe(tx: StoreReadTx, id: string): (Omit<ModelTask, 'ticketCount' | 'claimed'> & { claimed: boolean }) | undefined {
  const t = tx.tasks.get(id);
  const tickets: Record<string, ModelTicket> = {};
  for (const k of tx.tickets.forTask(id))
    tickets[k.ticketId] = { serverState: k.serverState, settleState: k.settleState as ModelTicket['settleState'] };
  if (!t) {
    if (Object.keys(tickets).length === 0) return undefined;
    return { id, status: 'cancelled', title: '', prompt: '', claimed: false, schedulable: false, ticket: null, deleted: true, tickets };
  }
  return {
    id,
    status: t.status as ModelStatus,
    title: t.title,
    prompt: t.prompt,
    claimed: t.claimRunning,
    schedulable: t.schedulable,
    ticket: t.serverTicketId,
    deleted: false,
    tickets,
  };
}

/** The part of a model task the store must reproduce exactly. */
export function comparable(m: ModelTask): unknown {
  if (m.deleted) return { deleted: true, tickets: m.tickets };
  return {
    status: m.status,
    title: m.title,
    prompt: m.prompt,
    schedulable: m.schedulable,
    ticket: m.ticket,
    claimed: m.claimed,
    tickets: m.tickets,
  };
}

export function comparableObserved(o: ReturnType<typeof observe>): unknown {
  if (!o) return undefined;
  if (o.deleted) return { deleted: true, tickets: o.tickets };
  return {
    status: o.status,
    title: o.title,
    prompt: o.prompt,
    schedulable: o.schedulable,
    ticket: o.ticket,
    claimed: o.claimed,
    tickets: o.tickets,
  };
}

/** A small seeded PRNG (mulberry32) so a failing run can be replayed from its seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KINDS: Array<[Op['kind'], number]> = [
  ['create', 14],
  ['pause', 6],
  ['continue', 6],
  ['start', 8],
  ['requeue', 5],
  ['complete', 5],
  ['fail', 3],
  ['cancel', 4],
  ['edit', 10],
  ['ready', 10],
  ['retake', 5],
  ['delete', 4],
  ['settle', 5],
  ['ackSettle', 5],
  ['poll', 10],
];
const TOTAL = KINDS.reduce((s, [, w]) => s + w, 0);

/** Picks the next random operation for a worker that owns `ids`. */
export function randomOp(rand: () => number, prefix: string, seq: number, ids: string[]): Op {
  let r = rand() * TOTAL;
  let kind: Op['kind'] = 'create';
  for (const [k, w] of KINDS) {
    if ((r -= w) < 0) {
      kind = k;
      break;
    }
  }
  if (kind === 'create' || ids.length === 0) return { kind: 'create', id: `${prefix}-${seq}` };
  const id = ids[Math.floor(rand() * ids.length)];
  if (kind === 'edit') return { kind, id, title: `title ${id} @${seq}`, prompt: `prompt ${id} edited at ${seq} `.padEnd(200, '~') };
  return { kind, id } as Op;
}
