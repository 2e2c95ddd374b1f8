// Shared set-up for the gateway integration tests: a real gateway on loopback with a ManualClock,
// no promote timer (tests call tick()), and a small HTTP client. The same suites run against each
// store (GATEWAY_TEST_STORES): a SQLite file in a temp dir, memory, or a database on a throwaway
// MariaDB (the MySQL suites, `npm run test:mysql`).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as esbuild from 'esbuild';
import { ManualClock } from '../../src/core/clock';
import type { GatewayConfig } from '../../src/gateway/config';
import { GatewayServer } from '../../src/gateway/http/server';
import { silentLogger } from '../../src/gateway/http/logger';
import { GatewayPaths, TICKET_HEADER, type SettleReason } from '../../src/protocol/gateway';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';

/** 2026-01-05 02:00 UTC = 10:00 in Asia/Shanghai: off-peak under the default 14:00–18:00 peak. */
export const MORNING_SHANGHAI = Date.UTC(2026, 0, 5, 2, 0, 0);
/** 2026-01-05 07:00 UTC = 15:00 in Asia/Shanghai: inside the default peak. */
export const PEAK_SHANGHAI = Date.UTC(2026, 0, 5, 7, 0, 0);

export const KEYS = {
  alice: 'alice-key-0123456789',
  bob: 'bob-key-0123456789',
  frank: 'frank-key-0123456789',
} as const;

export type TestStoreKind = 'sqlite' | 'memory' | 'mysql';

/** The stores the gateway suites run against: OFFPEAK_GATEWAY_TEST_STORES, else SQLite and memory. */
export const GATEWAY_TEST_STORES: readonly TestStoreKind[] = (process.env.OFFPEAK_GATEWAY_TEST_STORES ?? 'sqlite,memory')
  .split(',')
  .map((kind) => {
    if (kind !== 'sqlite' && kind !== 'memory' && kind !== 'mysql') throw new Error(`OFFPEAK_GATEWAY_TEST_STORES: unknown store ${kind}`);
    return kind;
  });

let currentStore: TestStoreKind = 'sqlite';
/** Databases made for the MySQL runs, by the SQLite path a test names (a restart reopens the same one). */
const mysqlDatabases = new Map<string, string>();

/** Call inside a describe: its gateways use `kind`. */
export function useGatewayStore(kind: TestStoreKind): void {
  before(() => {
    currentStore = kind;
  });
  after(() => {
    currentStore = 'sqlite';
  });
}

/** How suite titles name a store. */
export function storeLabel(kind: TestStoreKind): string {
  return { sqlite: 'SQLite file', memory: 'memory store', mysql: 'MariaDB' }[kind];
}

async function storeSettings(dbPath: string): Promise<Partial<GatewayConfig>> {
  if (currentStore !== 'mysql') return { store: currentStore, db: dbPath };
  let url = mysqlDatabases.get(dbPath);
  if (!url) {
    // Loaded only by the MySQL runs: the other runs need neither mysql2 nor a server.
    const { sharedMariadb } = await import('../mysql/mariadb-server');
    url = await (await sharedMariadb()).createDatabase();
    mysqlDatabases.set(dbPath, url);
  }
  return { store: 'mysql', mysqlUrl: url };
}

export function testConfig(dbPath: string, overrides: Partial<GatewayConfig> = {}): Partial<GatewayConfig> {
  return {
    port: 0,
    store: 'sqlite',
    db: dbPath,
    promoteIntervalMs: 0,
    logLevel: 'silent',
    users: [
      { id: 'alice', apiKey: KEYS.alice, plan: 'coding' },
      { id: 'bob', apiKey: KEYS.bob, plan: 'coding' },
      { id: 'frank', apiKey: KEYS.frank, plan: 'free' },
    ],
    ...overrides,
  };
}

export class TempDir {
  readonly path = mkdtempSync(path.join(os.tmpdir(), 'offpeak-gw-'));
  file(name: string): string {
    return path.join(this.path, name);
  }
  remove(): void {
    rmSync(this.path, { recursive: true, force: true });
  }
}

export interface Answer<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

/** A minimal client speaking the gateway API with one user's key. */
export class GatewayTestClient {
  constructor(
    readonly baseUrl: string,
    readonly key: string,
  ) {}

  async request<T = Record<string, unknown>>(
    method: string,
    pathname: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer<T>> {
    const res = await fetch(this.baseUrl + pathname, {
      method,
      headers: { authorization: `Bearer ${this.key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON (e.g. SSE): keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed as T };
  }

  configs() {
    return this.request('GET', GatewayPaths.clientConfigs);
  }
  availability() {
    return this.request('GET', GatewayPaths.availability);
  }
  take(taskId: string) {
    return this.request('POST', GatewayPaths.take, { task_id: taskId });
  }
  status(ticketIds: string[], waitMs?: number, knownStates?: Record<string, string>) {
    return this.request<{ server_time: number; tickets: Record<string, unknown>[]; next_poll_after_ms: number | null }>(
      'POST',
      GatewayPaths.status,
      {
        ticket_ids: ticketIds,
        ...(waitMs !== undefined ? { wait_ms: waitMs } : {}),
        ...(knownStates !== undefined ? { known_states: knownStates } : {}),
      },
    );
  }
  async stateOf(ticketId: string): Promise<Record<string, unknown>> {
    const answer = await this.status([ticketId]);
    if (answer.status !== 200) throw new Error(`status failed: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body.tickets[0];
  }
  settle(ticketId: string, reason: SettleReason = 'completed') {
    return this.request('POST', GatewayPaths.settle(ticketId), { reason });
  }
  /** A non-streaming model request with the ticket header. */
  message(
    ticketId: string | undefined,
    body: Record<string, unknown> = { model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
    query = '?beta=true',
  ) {
    return this.request('POST', `${GatewayPaths.anthropicMessages}${query}`, body, {
      'anthropic-version': '2023-06-01',
      ...(ticketId !== undefined ? { [TICKET_HEADER]: ticketId } : {}),
    });
  }
}

export interface TestGateway {
  gateway: GatewayServer;
  clock: ManualClock;
  alice: GatewayTestClient;
  bob: GatewayTestClient;
  frank: GatewayTestClient;
  close(): Promise<void>;
}

export async function startTestGateway(
  dbPath: string,
  overrides: Partial<GatewayConfig> = {},
  clock = new ManualClock(MORNING_SHANGHAI),
): Promise<TestGateway> {
  const gateway = await GatewayServer.start({
    config: testConfig(dbPath, { ...(await storeSettings(dbPath)), ...overrides }),
    clock,
    log: silentLogger,
  });
  return {
    gateway,
    clock,
    alice: new GatewayTestClient(gateway.url, KEYS.alice),
    bob: new GatewayTestClient(gateway.url, KEYS.bob),
    frank: new GatewayTestClient(gateway.url, KEYS.frank),
    close: () => gateway.close(1000),
  };
}

export interface GatewaySuite {
  /** The suite's fake upstream (test fixture), reset before each test. */
  readonly upstream: FakeAnthropicUpstream;
  /** This test's temp dir. */
  readonly dir: TempDir;
  /** The gateway `start` made in this test; closed after it (set undefined when the test closed it). */
  current: TestGateway | undefined;
  start(overrides?: Partial<GatewayConfig>, clock?: ManualClock): Promise<TestGateway>;
}

/** Mocha hooks of a gateway suite: one fake upstream for the suite; a temp dir and a gateway per test. */
export function gatewaySuite(defaults: Partial<GatewayConfig> = {}): GatewaySuite {
  let upstream: FakeAnthropicUpstream | undefined;
  let dir: TempDir | undefined;
  const suite: GatewaySuite = {
    get upstream() {
      if (!upstream) throw new Error('the fake upstream starts in the suite before() hook');
      return upstream;
    },
    get dir() {
      if (!dir) throw new Error('the temp dir is made in beforeEach()');
      return dir;
    },
    current: undefined,
    async start(overrides = {}, clock) {
      suite.current = await startTestGateway(
        suite.dir.file('tickets.sqlite'),
        { upstreamUrl: suite.upstream.url, ...defaults, ...overrides },
        clock,
      );
      return suite.current;
    },
  };
  before(async () => {
    upstream = await FakeAnthropicUpstream.start();
  });
  after(async () => {
    await upstream?.close();
  });
  beforeEach(() => {
    dir = new TempDir();
    upstream?.reset();
  });
  afterEach(async () => {
    await suite.current?.close();
    suite.current = undefined;
    dir?.remove();
  });
  return suite;
}

/** Resolves once the gateway holds `count` status long-polls (so a test's next change happens after their first read). */
export async function longPollsWaiting(gateway: GatewayServer, count = 1): Promise<void> {
  for (let i = 0; i < 1000 && gateway.pendingLongPolls < count; i++) await new Promise((r) => setTimeout(r, 10));
  if (gateway.pendingLongPolls < count) throw new Error(`expected ${count} waiting long-polls, have ${gateway.pendingLongPolls}`);
}

export function ticketIdOf(answer: Answer): string {
  const id = (answer.body as { ticket_id?: string }).ticket_id;
  if (answer.status !== 200 || !id) throw new Error(`take failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return id;
}

export function errorOf(answer: Answer): {
  type: string;
  code: string;
  message: string;
  next_take_at?: number | null;
  retry_after_ms?: number;
} {
  return (answer.body as { error: { type: string; code: string; message: string } }).error;
}

const gatewaySourceEntry = path.resolve(__dirname, '../../src/gateway/main.ts');

/** Bundles the gateway as esbuild.mjs bundles dist/gateway.js (better-sqlite3 and mysql2 external). */
export async function buildGatewayBundle(outfile: string): Promise<void> {
  await esbuild.build({
    entryPoints: [gatewaySourceEntry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['better-sqlite3', 'mysql2'],
    mainFields: ['module', 'main'],
    logLevel: 'silent',
  });
}

export interface RunningGateway {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Kills what is still running of `gateways` (SIGKILL) and waits for each to exit; empties the list. */
export async function killGateways(gateways: RunningGateway[]): Promise<void> {
  for (const g of gateways.splice(0)) {
    if (g.child.exitCode === null) g.child.kill('SIGKILL');
    await g.exited;
  }
}

/** Spawns the gateway (argv, no shell) and waits for its "listening on" line. */
export async function spawnGateway(args: string[], options: { bundle?: string; env?: NodeJS.ProcessEnv } = {}): Promise<RunningGateway> {
  const argv = options.bundle ? [options.bundle, ...args] : ['--import', 'tsx', gatewaySourceEntry, ...args];
  const child = spawn(process.execPath, argv, {
    cwd: path.resolve(__dirname, '../..'),
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${out}\n${err}`)), 60_000);
    const check = () => {
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code} before listening:\n${out}\n${err}`));
    });
  });
  return { child, url, stdout: () => out, stderr: () => err, exited };
}
