// Scale-out bench: writes bench/results/scaleout.json and prints it. MariaDB (a throwaway server,
// as in the MySQL suites) on this machine; gateways are real processes (source entry, tsx).
//
// 1. take+status throughput (requests/s): 16 concurrent loops, each a take (new task id) then a
//    status of that ticket, spread over 1 instance and then over 3 instances on one database. The
//    load generator is this process; the machine has 2 cores shared by MariaDB, the gateways and
//    the generator, so 3 instances cannot be 3x here (instances3_vs_1_ratio says what it was).
// 2. promote latency with 10,000 queued tickets: one authority tick (lock the promoter, count
//    capacity, lock and promote the head of the queue, commit) timed in this process, p50 of 40.
// 3. cross-instance long-poll wake: a long-poll waits on instance A, the ticket is settled through
//    instance B; time from sending the settle to the poll's answer, p50 of 30. The same with poll
//    and settle on one instance is the floor (longpoll_wake_cross_vs_same_ratio). Goal <= 250 ms.
import { loadavg } from 'node:os';
import mysql from 'mysql2/promise';
import { ManualClock } from '../src/core/clock';
import { TicketAuthority } from '../src/gateway/authority/authority';
import { resolveGatewayConfig } from '../src/gateway/config';
import { MysqlTicketStore } from '../src/gateway/stores/mysql-store';
import { authorityPolicy } from '../src/gateway/authority/authority-policy';
import { OffPeakWindows } from '../src/gateway/authority/windows';
import { GatewayTestClient, spawnGateway, type RunningGateway } from '../test/integration/gateway-helpers';
import { MariadbServer, mariadbAvailable } from '../test/mysql/mariadb-server';
import { NOT_RUN_EXIT, publish, sized } from './mode';

const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? sized(5000, 1000));
const LOOPS = 16;
const USERS = 16;
const QUEUED = sized(10_000, 2_000);
const PROMOTE_SAMPLES = sized(40, 10);
const WAKE_SAMPLES = sized(30, 5);
const keyOf = (u: number) => `bench-user${u}-0123456789`;

function p50(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function startInstances(url: string, count: number): Promise<RunningGateway[]> {
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
    '1000000',
    '--quota-takes',
    '1000000',
    '--max-live-tickets',
    '1000000',
    '--log-level',
    'warn',
  ];
  // Keys through the environment, not argv (the gateway warns about --user id:key).
  const users = Array.from({ length: USERS }, (_, u) => `user${u}:${keyOf(u)}:coding`).join(',');
  return Promise.all(Array.from({ length: count }, () => spawnGateway(args, { env: { OFFPEAK_GATEWAY_USERS: users } })));
}

async function stopInstances(gateways: RunningGateway[]): Promise<void> {
  for (const g of gateways) g.child.kill('SIGTERM');
  await Promise.all(gateways.map((g) => g.exited));
}

async function throughput(gateways: RunningGateway[]): Promise<number> {
  let requests = 0;
  let task = 0;
  const until = performance.now() + ROUND_MS;
  await Promise.all(
    Array.from({ length: LOOPS }, async (_, loop) => {
      const client = new GatewayTestClient(gateways[loop % gateways.length].url, keyOf(loop % USERS));
      while (performance.now() < until) {
        const take = await client.take(`t-${process.pid}-${task++}`);
        if (take.status !== 200) throw new Error(`take ${take.status} ${JSON.stringify(take.body)}`);
        const status = await client.status([(take.body as { ticket_id: string }).ticket_id]);
        if (status.status !== 200) throw new Error(`status ${status.status}`);
        requests += 2;
      }
    }),
  );
  return requests / (ROUND_MS / 1000);
}

async function wakeLatency(poller: GatewayTestClient, settler: GatewayTestClient, samples: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < samples; i++) {
    const id = ((await settler.take(`wake-${process.pid}-${Math.random()}`)).body as { ticket_id: string }).ticket_id;
    for (let j = 0; j < 200 && (await poller.stateOf(id)).state !== 'ready'; j++) await new Promise((r) => setTimeout(r, 20));
    const poll = poller.status([id], 20_000, { [id]: 'ready' });
    await new Promise((r) => setTimeout(r, 100)); // the poll is waiting on its instance
    const sent = performance.now();
    await settler.settle(id, 'completed');
    const answer = await poll;
    if (answer.body.tickets[0].state !== 'settled') throw new Error('the long-poll answered without the change');
    out.push(performance.now() - sent);
  }
  return out;
}

async function promoteLatency(url: string): Promise<number[]> {
  const connection = await mysql.createConnection(url);
  const store = await MysqlTicketStore.open({ url });
  const clock = new ManualClock(Date.now());
  // No demo pacing: the working demo model's presets hold a new ticket queued 15 s, and this
  // measures the promotion itself.
  const config = resolveGatewayConfig({
    demo: true,
    queueHoldMs: 0,
    admissionHoldMs: 0,
    segmentCapacity: 1,
    takesPerWindow: 1_000_000,
    maxLiveTicketsPerUser: 1_000_000,
  });
  const authority = new TicketAuthority(store, clock, new OffPeakWindows('UTC', { kind: 'always' }), authorityPolicy(config));
  try {
    await connection.query("UPDATE tickets SET state = 'settled', live_key = NULL WHERE state IN ('queued', 'ready', 'active')");
    for (let batch = 0; batch < QUEUED / 1000; batch++) {
      const rows = Array.from({ length: 1000 }, (_, i) => [
        `tkt_q${batch}_${i}`,
        `user${i % USERS}`,
        `q-${batch}-${i}`,
        null,
        'queued',
        clock.now(),
      ]);
      await connection.query('INSERT INTO tickets (ticket_id, user_id, task_id, live_key, state, taken_at) VALUES ?', [rows]);
    }
    const samples: number[] = [];
    for (let i = 0; i < PROMOTE_SAMPLES; i++) {
      const started = performance.now();
      const { promoted } = await authority.tick();
      samples.push(performance.now() - started);
      if (promoted.length !== 1) throw new Error(`a tick promoted ${promoted.length}`);
      await connection.query("UPDATE tickets SET state = 'settled' WHERE ticket_id = ?", [promoted[0]]);
    }
    const [left] = await connection.query<mysql.RowDataPacket[]>("SELECT COUNT(*) AS n FROM tickets WHERE state = 'queued'");
    if (Number(left[0].n) < QUEUED - PROMOTE_SAMPLES) throw new Error(`the queue was not ${QUEUED} deep`);
    return samples;
  } finally {
    authority.stop();
    await store.close();
    await connection.end();
  }
}

async function main(): Promise<void> {
  // As `npm run test:mysql`: without MariaDB this cannot run; in CI that is a failure.
  if (!mariadbAvailable() && process.env.CI !== 'true' && process.env.OFFPEAK_REQUIRE_MYSQL !== '1') {
    console.log('MariaDB not installed: scale-out bench not run (install mariadb-server; CI installs it).');
    process.exit(NOT_RUN_EXIT);
  }
  const server = await MariadbServer.start();
  try {
    const url1 = await server.createDatabase();
    const one = await startInstances(url1, 1);
    await throughput(one); // warm-up
    const instances1 = await throughput(one);
    await stopInstances(one);

    const url3 = await server.createDatabase();
    const three = await startInstances(url3, 3);
    await throughput(three);
    const instances3 = await throughput(three);
    const a = new GatewayTestClient(three[0].url, keyOf(0));
    const b = new GatewayTestClient(three[1].url, keyOf(0));
    await wakeLatency(a, b, 3); // warm-up
    const cross = await wakeLatency(a, b, WAKE_SAMPLES);
    const same = await wakeLatency(a, a, WAKE_SAMPLES);
    await stopInstances(three);

    const promote = await promoteLatency(await server.createDatabase());
    const result = {
      instances1_rps: Math.round(instances1),
      instances3_rps: Math.round(instances3),
      promote_p50_ms_10k_queued: Number(p50(promote).toFixed(2)),
      longpoll_wake_p50_ms_cross_instance: Number(p50(cross).toFixed(1)),
      details: {
        machine: 'one 2-core machine runs MariaDB, every gateway instance and the load generator: 3 instances share the same 2 cores as 1',
        instances3_vs_1_ratio: Number((instances3 / instances1).toFixed(2)),
        longpoll_wake_p50_ms_same_instance: Number(p50(same).toFixed(1)),
        longpoll_wake_cross_vs_same_ratio: Number((p50(cross) / p50(same)).toFixed(2)),
        longpoll_wake_goal_ms: 250,
        change_feed_poll_ms: 50,
        loadavg_1m_at_end: Number(loadavg()[0].toFixed(2)),
        queued_tickets: QUEUED,
        load_loops: LOOPS,
        round_ms: ROUND_MS,
        promote_samples_ms: promote.map((x) => Number(x.toFixed(2))),
      },
    };
    publish('scaleout', result);
  } finally {
    await server.stop();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
