// Test world for the service integration tests: the REAL reference gateway (its server module,
// on loopback, in-memory ticket store, sharing a ManualClock with the client side), the fault
// proxy fixture in front of it, and one or more TaskService instances ("windows"), each with its
// own TaskStore on ONE sql.js DB file, all driven by ManualTimers.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import { GatewayServer } from '../../src/gateway/http/server';
import type { GatewayConfig } from '../../src/gateway/config';
import { GatewayClient } from '../../src/gateway-client/client';
import { ManualTimers } from '../../src/core/timers';
import { TaskService, type AvailabilityOptions, type CreateTaskInput, type SyncConfig, type TaskServiceOptions } from '../../src/service';
import { TaskStore } from '../../src/store';
import { FaultProxy } from '../fixtures/fault-proxy';

export const API_KEY = 'sk-offpeak-test-user-1';
/** The user API_KEY stands for, as the gateway's authority sees it (for admitting requests directly). */
export const USER = { id: 'u1', plan: 'coding', exposure: true };
export const START = Date.parse('2026-11-29T20:00:00Z');

export interface Window {
  name: string;
  store: TaskStore;
  client: GatewayClient;
  service: TaskService;
  stopped: string[];
}

export interface WorldOptions {
  gateway?: Partial<GatewayConfig>;
  sync?: Partial<SyncConfig>;
  availability?: AvailabilityOptions;
  /** Per-call client timeout in real ms (small, so 'hang' faults resolve fast). */
  timeoutMs?: number;
}

export class World {
  readonly clock = new ManualClock(START);
  readonly timers = new ManualTimers(this.clock);
  readonly windows: Window[] = [];
  gateway!: GatewayServer;
  proxy!: FaultProxy;
  /** A client straight to the gateway (no proxy), for assertions about its truth. */
  direct!: GatewayClient;
  dir = mkdtempSync(path.join(os.tmpdir(), 'offpeak-service-'));
  apiKey: string | undefined = API_KEY;

  private constructor(private readonly options: WorldOptions) {}

  static async start(options: WorldOptions = {}): Promise<World> {
    const world = new World(options);
    world.gateway = await GatewayServer.start({
      clock: world.clock,
      config: {
        port: 0,
        store: 'memory',
        alwaysOpen: true,
        promoteIntervalMs: 0,
        segmentCapacity: 1000,
        takesPerWindow: 100_000,
        maxLiveTicketsPerUser: 100_000,
        users: [{ id: 'u1', apiKey: API_KEY, plan: 'coding' }],
        logLevel: 'silent',
        ...options.gateway,
      },
    });
    world.proxy = await FaultProxy.start(world.gateway.url);
    world.direct = new GatewayClient({ baseUrl: world.gateway.url, apiKey: () => API_KEY, clock: world.clock });
    return world;
  }

  async openWindow(
    name = `w${this.windows.length + 1}`,
    extra: {
      stopAgent?: (taskId: string) => void | Promise<void>;
      newTaskId?: () => string;
      pullRequests?: TaskServiceOptions['pullRequests'];
    } = {},
  ): Promise<Window> {
    // durable: false skips the fsyncs only (the store's own crash tests cover durability); the
    // lock, reload, transaction and atomic rename are the real thing. watch: false because the
    // leader re-reads the DB on every lease tick anyway, and simulated time must drive everything.
    const store = await TaskStore.open({ directory: this.dir, clock: this.clock, watch: false, durable: false });
    const timeoutMs = this.options.timeoutMs ?? 3000;
    const client = new GatewayClient({
      baseUrl: this.proxy.baseUrl,
      apiKey: () => this.apiKey,
      clock: this.clock,
      timeouts: { readMs: timeoutMs, takeMs: timeoutMs, statusMs: timeoutMs, settleMs: timeoutMs },
    });
    const stopped: string[] = [];
    const service = new TaskService({
      store,
      gateway: client,
      clock: this.clock,
      timers: this.timers,
      windowId: name,
      sync: { longPollMs: 0, ...this.options.sync },
      availability: this.options.availability,
      newTaskId: extra.newTaskId,
      pullRequests: extra.pullRequests,
      stopAgent:
        extra.stopAgent ??
        ((taskId) => {
          stopped.push(taskId);
        }),
    });
    await service.start();
    const w = { name, store, client, service, stopped };
    this.windows.push(w);
    return w;
  }

  store0(): TaskStore {
    return this.windows[0].store;
  }

  /** Waits for every window's in-flight work. */
  async settle(): Promise<void> {
    for (let i = 0; i < 3; i++) {
      await Promise.all(this.windows.map((w) => w.service.idle()));
      await new Promise((r) => setImmediate(r));
    }
  }

  /** Moves simulated time forward, firing due timers in order and waiting for the work they start. */
  async advance(ms: number): Promise<void> {
    await this.settle();
    await this.timers.advanceTo(this.clock.now() + ms, () => this.settle());
    await this.settle();
  }

  /** The gateway's promote timer, once. */
  async promote(): Promise<void> {
    await this.gateway.tick();
  }

  statusRequests(): number {
    return this.proxy.forwarded({ pathIncludes: '/ticket/status' }).length;
  }

  takeRequests(): number {
    return this.proxy.forwarded({ method: 'POST', pathIncludes: '/off-peak/ticket' }).filter((r) => r.path === '/api/v1/off-peak/ticket')
      .length;
  }

  settleRequests(): { path: string; body: unknown }[] {
    return this.proxy.forwarded({ pathIncludes: '/settle' });
  }

  /** Every ticket id the gateway issued through the proxy (from its take answers). */
  issuedTickets(): Set<string> {
    const ids = new Set<string>();
    for (const r of this.proxy.forwarded()) {
      if (r.path === '/api/v1/off-peak/ticket' && r.gatewayStatus === 200) ids.add((r.gatewayBody as { ticket_id: string }).ticket_id);
    }
    return ids;
  }

  /** The gateway's own view of some tickets (asked directly, not through the proxy). */
  async gatewayStates(ids: Iterable<string>): Promise<Map<string, string>> {
    const all = [...ids];
    const out = new Map<string, string>();
    for (let i = 0; i < all.length; i += 100) {
      const s = await this.direct.status(all.slice(i, i + 100));
      for (const t of s.tickets) out.set(t.ticket_id, t.state);
    }
    return out;
  }

  async close(): Promise<void> {
    for (const w of this.windows) {
      await w.service.stop().catch(() => undefined);
      await w.store.close().catch(() => undefined);
    }
    await this.proxy.close();
    await this.gateway.close(0);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

let counter = 0;
export function taskInput(overrides: Partial<CreateTaskInput> = {}): CreateTaskInput {
  counter += 1;
  return {
    title: `Task ${counter}`,
    prompt: `Do thing number ${counter}`,
    permissionMode: 'acceptEdits',
    workspacePath: '/tmp/ws-a',
    ...overrides,
  };
}

/** What the runtime would do to start a task: claim, then markRunning, then mark the segment started. */
export async function startRunning(w: Window, taskId: string): Promise<string> {
  const ticketId = await w.store.mutate((tx) => {
    if (!tx.tasks.claim(taskId)) throw new Error(`could not claim ${taskId}`);
    if (!tx.tasks.markRunning(taskId, { sessionId: `session-${taskId}` })) throw new Error(`could not mark ${taskId} running`);
    const t = tx.tasks.get(taskId)!;
    tx.tickets.startSegment(t.serverTicketId!);
    return t.serverTicketId!;
  });
  return ticketId;
}

/**
 * One new window and one task in it, promoted, past the first poll and running (claimed, marked
 * running, its segment started): the window, the task and its first ticket.
 */
export async function oneRunningTask(
  world: World,
): Promise<{ w: Window; t: Awaited<ReturnType<Window['service']['create']>>; ticket1: string }> {
  const w = await world.openWindow();
  const t = await w.service.create(taskInput());
  await world.promote();
  await world.advance(15_000);
  const ticket1 = await startRunning(w, t.id);
  return { w, t, ticket1 };
}
