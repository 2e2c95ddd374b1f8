// Several gateway PROCESSES on one MariaDB: the guarantees of one gateway hold across instances,
// and a SIGKILLed instance leaves nothing stuck. Real processes, real database, the scripted
// model upstream fixture.
import assert from 'node:assert/strict';
import mysql from 'mysql2/promise';
import { FakeAnthropicUpstream } from '../fixtures/fake-anthropic-upstream';
import { errorOf, GatewayTestClient, spawnGateway, type Answer, type RunningGateway } from '../integration/gateway-helpers';
import { sharedMariadb } from './mariadb-server';

const USERS = 20;
const TAKES_PER_USER = 25;
const CAPACITY = 6;
const QUOTA = 18;
const LIVE_LIMIT = 15;
const MODEL_CONCURRENCY = 4;
/** Users of the smaller tests after the big one (which uses up the first USERS' quotas). */
const SPARE_USERS = 10;

const keyOf = (user: number) => `key-user${user}-0123456789`;

function gatewayArgs(url: string, upstreamUrl: string, extra: string[] = []): string[] {
  const args = [
    '--store',
    'mysql',
    '--mysql-url',
    url,
    '--port',
    '0',
    '--always-open',
    '--promote-interval-ms',
    '50',
    '--segment-capacity',
    String(CAPACITY),
    '--quota-takes',
    String(QUOTA),
    '--max-live-tickets',
    String(LIVE_LIMIT),
    '--max-model-concurrency',
    String(MODEL_CONCURRENCY),
    '--ready-ttl-ms',
    '60000',
    '--upstream-url',
    upstreamUrl,
    '--log-level',
    'warn',
    // Every simulated user connects from 127.0.0.1, 500 at once: the per-address cap on connections
    // that have not shown a key yet is for strangers, not for this crowd behind one address.
    '--max-unauthenticated-per-address',
    '10000',
    ...extra,
  ];
  for (let u = 0; u < USERS + SPARE_USERS; u++) args.push('--user', `user${u}:${keyOf(u)}:coding`);
  return args;
}

/** The request, retried on another instance when the one asked is gone (what a load balancer does). */
async function onAny<T>(
  clients: GatewayTestClient[],
  start: number,
  call: (client: GatewayTestClient) => Promise<Answer<T>>,
): Promise<Answer<T>> {
  let lastError: unknown;
  for (let i = 0; i < clients.length; i++) {
    try {
      return await call(clients[(start + i) % clients.length]);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

describe('gateway scale-out: three instances on one MariaDB', function () {
  this.timeout(240_000);
  let upstream: FakeAnthropicUpstream;
  let db: mysql.Connection;
  let url: string;
  const gateways: RunningGateway[] = [];

  before(async () => {
    upstream = await FakeAnthropicUpstream.start();
    upstream.setDefaultReply({ kind: 'text', text: 'ok', delayMs: 20 });
    const server = await sharedMariadb();
    url = await server.createDatabase();
    // Three instances start at once: the migrations must run once, under the lock.
    gateways.push(...(await Promise.all([0, 1, 2].map(() => spawnGateway(gatewayArgs(url, upstream.url))))));
    db = await mysql.createConnection(url);
  });

  after(async () => {
    await db?.end();
    for (const g of gateways) {
      if (g.child.exitCode === null && g.child.signalCode === null) g.child.kill('SIGTERM');
      await g.exited;
    }
    await upstream?.close();
  });

  it('migrations ran once although three instances started together', async () => {
    const [rows] = await db.query<mysql.RowDataPacket[]>('SELECT version FROM schema_migrations');
    assert.deepEqual(
      rows.map((r) => Number(r.version)),
      [1],
    );
  });

  it('20 users x 25 concurrent takes across instances, long-polls, model requests, settles, one instance SIGKILLed midway: FIFO, capacity, one ticket per task, quotas and every settle hold', async () => {
    const clientsOf = (user: number) => gateways.map((g) => new GatewayTestClient(g.url, keyOf(user)));
    // Capacity sampled straight from the database while everything runs.
    let sampling = true;
    let maxHolding = 0;
    let samples = 0;
    const sampler = (async () => {
      while (sampling) {
        const [rows] = await db.query<mysql.RowDataPacket[]>("SELECT COUNT(*) AS n FROM tickets WHERE state IN ('ready', 'active')");
        maxHolding = Math.max(maxHolding, Number(rows[0].n));
        samples += 1;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();

    // Phase 1: every user's 25 takes at once, spread over the instances; task ids repeat (5 of
    // the 25 are retries of another take's task id, sent to a different instance).
    const takeAnswers = new Map<string, string[]>(); // `${user}/${task}` -> ticket ids answered
    const refusals: string[] = [];
    await Promise.all(
      Array.from({ length: USERS }, (_, user) =>
        Promise.all(
          Array.from({ length: TAKES_PER_USER }, async (_, i) => {
            const task = `task-${i % 20}`;
            const answer = await clientsOf(user)[(user + i) % 3].take(task);
            if (answer.status === 200) {
              const key = `${user}/${task}`;
              takeAnswers.set(key, [...(takeAnswers.get(key) ?? []), (answer.body as { ticket_id: string }).ticket_id]);
            } else refusals.push(errorOf(answer).code);
          }),
        ),
      ),
    );
    for (const [key, ids] of takeAnswers) assert.equal(new Set(ids).size, 1, `one ticket for ${key}, got ${ids.join(', ')}`);
    assert.ok(
      refusals.every((code) => code === '3103'),
      `only limit refusals: ${refusals.join(',')}`,
    );
    const [perUser] = await db.query<mysql.RowDataPacket[]>('SELECT user_id, COUNT(*) AS n FROM tickets GROUP BY user_id');
    for (const row of perUser) assert.ok(Number(row.n) <= LIVE_LIMIT, `${row.user_id} holds ${row.n} live tickets > ${LIVE_LIMIT}`);

    // Phase 2: each user works its tickets: long-poll until ready, one model request, settle;
    // then takes the tasks it has left (the quota decides how many). Instance 2 is SIGKILLed midway.
    const settled = new Map<string, string>(); // ticket -> reason answered
    let killed = false;
    let settlesBeforeKill = 0;
    const work = async (user: number) => {
      const clients = clientsOf(user);
      const alive = () => (killed ? clients.slice(0, 2) : clients);
      const pending = [...takeAnswers.entries()].filter(([key]) => key.startsWith(`${user}/`)).map(([, ids]) => ids[0]);
      let laterTakes = 0;
      let n = user;
      while (pending.length > 0) {
        n += 1;
        const answer = await onAny(alive(), n, (c) => c.status(pending, 10_000));
        assert.equal(answer.status, 200);
        for (const entry of answer.body.tickets) {
          if (entry.state !== 'ready' && entry.state !== 'active') continue;
          const id = entry.ticket_id as string;
          const model = await onAny(alive(), n + 1, (c) => c.message(id));
          assert.ok(model.status === 200 || model.status === 429, `model answer ${model.status} ${JSON.stringify(model.body)}`);
          if (model.status === 429) assert.equal(errorOf(model).code, '3105');
          const settle = await onAny(alive(), n + 2, (c) => c.settle(id, 'completed'));
          assert.equal(settle.status, 200);
          settled.set(id, 'completed');
          if (!killed) settlesBeforeKill += 1;
          pending.splice(pending.indexOf(id), 1);
          // One more task while the quota allows.
          if (laterTakes < 5) {
            const take = await onAny(alive(), n + 3, (c) => c.take(`later-${laterTakes}`));
            laterTakes += 1;
            if (take.status === 200) pending.push((take.body as { ticket_id: string }).ticket_id);
            else assert.equal(errorOf(take).code, '3103');
          }
        }
      }
    };
    const killer = (async () => {
      while (settled.size < 60) await new Promise((r) => setTimeout(r, 20));
      gateways[2].child.kill('SIGKILL');
      killed = true;
      await gateways[2].exited;
    })();
    await Promise.all([...Array.from({ length: USERS }, (_, u) => work(u)), killer]);
    sampling = false;
    await sampler;

    assert.ok(killed && settlesBeforeKill >= 60 && settled.size > settlesBeforeKill, 'the kill happened midway');
    assert.ok(samples > 10, 'capacity was sampled while the run went on');
    assert.ok(maxHolding <= CAPACITY, `ready + active reached ${maxHolding} > ${CAPACITY}`);

    const [tickets] = await db.query<mysql.RowDataPacket[]>(
      'SELECT ticket_id, seq, user_id, task_id, state, ready_at, settle_reason FROM tickets ORDER BY seq',
    );
    // Every settle answered 200 is recorded with its reason.
    const byId = new Map(tickets.map((t) => [t.ticket_id as string, t]));
    for (const [id, reason] of settled) assert.equal(byId.get(id)?.settle_reason, reason, `settle of ${id} recorded`);
    // No user over quota; no (user, task) with two tickets that were live at once.
    const perUserCount = new Map<string, number>();
    for (const t of tickets) perUserCount.set(t.user_id as string, (perUserCount.get(t.user_id as string) ?? 0) + 1);
    for (const [user, count] of perUserCount) assert.ok(count <= QUOTA, `${user} took ${count} > ${QUOTA}`);
    const perTask = new Set<string>();
    for (const t of tickets) {
      const key = `${t.user_id}/${t.task_id}`;
      assert.ok(!perTask.has(key), `two tickets for ${key}`);
      perTask.add(key);
    }
    // FIFO: promotion times follow take order.
    const promoted = tickets.filter((t) => t.ready_at !== null);
    for (let i = 1; i < promoted.length; i++) {
      assert.ok(
        Number(promoted[i - 1].ready_at) <= Number(promoted[i].ready_at),
        `seq ${promoted[i - 1].seq} promoted after seq ${promoted[i].seq}`,
      );
    }
    assert.equal(settled.size, tickets.length, 'every ticket was worked to its settle');
    // The dead instance's model slots and registration are swept by the survivors.
    for (let i = 0; i < 200; i++) {
      const [slots] = await db.query<mysql.RowDataPacket[]>('SELECT COUNT(*) AS n FROM gateway_instances');
      if (Number(slots[0].n) === 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const [instances] = await db.query<mysql.RowDataPacket[]>('SELECT COUNT(*) AS n FROM gateway_instances');
    assert.equal(Number(instances[0].n), 2, 'the killed instance was swept');
  });

  it('a long-poll on one instance is answered by a settle on another', async () => {
    const [a, b] = gateways.filter((g) => g.child.exitCode === null && g.child.signalCode === null);
    const onA = new GatewayTestClient(a.url, keyOf(USERS));
    const onB = new GatewayTestClient(b.url, keyOf(USERS));
    const taken = await onA.take('cross-instance');
    const id = (taken.body as { ticket_id: string }).ticket_id;
    for (let i = 0; i < 200 && (await onA.stateOf(id)).state !== 'ready'; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal((await onA.stateOf(id)).state, 'ready');
    const poll = onA.status([id], 25_000, { [id]: 'ready' });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await onB.settle(id, 'cancelled')).status, 200);
    const answer = await poll;
    assert.equal(answer.body.tickets[0].state, 'settled');
  });

  it('model-request concurrency and 3102 hold across instances', async () => {
    const live = gateways.filter((g) => g.child.exitCode === null && g.child.signalCode === null);
    const ids: { client: GatewayTestClient; id: string }[] = [];
    for (let u = 0; u < MODEL_CONCURRENCY + 1; u++) {
      const client = new GatewayTestClient(live[u % live.length].url, keyOf(USERS + 1 + u));
      const answer = await client.take(`concurrency-${u}`);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      ids.push({ client, id: (answer.body as { ticket_id: string }).ticket_id });
    }
    for (let i = 0; i < 200; i++) {
      const states = await Promise.all(ids.map(({ client, id }) => client.stateOf(id)));
      if (states.every((s) => s.state === 'ready')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    // Every slot held by a request that hangs upstream, spread over both instances.
    upstream.enqueue(...Array.from({ length: MODEL_CONCURRENCY }, () => ({ kind: 'hang' as const })));
    const aborts = ids.slice(0, MODEL_CONCURRENCY).map(({ client, id }) => {
      const controller = new AbortController();
      void fetch(`${client.baseUrl}/api/anthropic/v1/messages`, {
        method: 'POST',
        signal: controller.signal,
        headers: {
          authorization: `Bearer ${client.key}`,
          'content-type': 'application/json',
          'x-off-peak-ticket-id': id,
          'anthropic-version': '2023-06-01',
        },
        body: JSON.stringify({ model: 'm', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      }).catch(() => undefined);
      return controller;
    });
    const seen = upstream.messageRequests().length;
    await upstream.waitFor(() => upstream.messageRequests().length >= seen + MODEL_CONCURRENCY);
    const last = ids[MODEL_CONCURRENCY];
    const busy = await last.client.message(last.id);
    assert.equal(busy.status, 429);
    assert.equal(errorOf(busy).code, '3105');
    for (const controller of aborts) controller.abort();
    // A ticket settled on one instance is refused with 3102 on another.
    const other = new GatewayTestClient(live.find((g) => g.url !== last.client.baseUrl)!.url, last.client.key);
    assert.equal((await last.client.settle(last.id)).status, 200);
    const refused = await other.message(last.id);
    assert.equal(refused.status, 400);
    assert.equal(errorOf(refused).code, '3102');
  });
});
