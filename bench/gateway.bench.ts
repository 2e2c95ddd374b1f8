// Gateway bench: writes bench/results/gateway.json and prints it.
//
// 1. status(100 tickets) requests/s through the real gateway (the esbuild bundle, SQLite store,
//    its own process) vs a bare node:http server (its own process) that reads the same request
//    body and answers the same JSON bytes. The load generator is a third process (keep-alive
//    HTTP/1.1 client, N connections), so no server shares its event loop with the client.
//    Rounds alternate bare/gateway (so load from other processes hits both alike). The machine
//    this runs on is shared, so throughput is the BEST round of each side (the least disturbed);
//    medians and every round are in `details` too, and so is a load-independent cross-check:
//    requests answered per CPU-second the server process used (from /proc/<pid>/stat).
// 2. A 2 MB SSE model stream from the scripted fake upstream (test fixture, in this process)
//    fetched directly vs through the gateway, by a client in a separate process: median time to
//    first byte and total time, and their ratios. The fake answers after a 200 ms "time to first
//    token" like a model does (sse_ttfb_ratio); the raw added latency with zero think time is
//    reported as well (sse_ttfb_ratio_zero_think, sse_ttfb_added_ms_zero_think).
// 3. Another user's take latency while one user floods status long-polls (2,000 at once, each
//    watching 100 tickets; the gateway lets that user hold its per-user maximum waiting and
//    answers the rest at once): take p50 under the flood vs idle, rounds alternating idle/flood
//    (take_p50_ms_under_longpoll_flood, take_flood_vs_idle_ratio).
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as esbuild from 'esbuild';
import { DEFAULT_CONFIG } from '../src/gateway/config';
import { FakeAnthropicUpstream } from '../test/fixtures/fake-anthropic-upstream';
import { publish, sized } from './mode';

const root = path.resolve(__dirname, '..');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? sized(2500, 500));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? sized(6, 1));
const SSE_ITERATIONS = Number(process.env.BENCH_SSE_ITERATIONS ?? sized(30, 3));
const SSE_BYTES = 2 * 1024 * 1024;
const THINK_MS = 200;
const KEY = 'bench-key-0123456789';
const FLOOD_KEY = 'flood-key-0123456789';
const TAKER_KEY = 'taker-key-0123456789';
const FLOOD_POLLS = Number(process.env.BENCH_FLOOD_POLLS ?? sized(2000, 200));
const TAKES_PER_ROUND = Number(process.env.BENCH_TAKES_PER_ROUND ?? sized(60, 10));
const FLOOD_ROUNDS = Number(process.env.BENCH_FLOOD_ROUNDS ?? sized(3, 1));
/** /metrics answers only to this token (env, never argv). */
const OPS_TOKEN = 'bench-ops-token-0123456789';

/** The load generator: keep-alive POSTs on N connections for a fixed time; prints {requests, errors, seconds}. */
const LOADGEN = `
const http = require('node:http');
const [url, body, conns, ms, auth] = process.argv.slice(1);
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(conns) });
const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: auth };
let ok = 0, errors = 0, running = 0;
const warmUntil = Date.now() + 500;
let start = 0; const end = warmUntil + Number(ms);
function one() {
  const now = Date.now();
  if (now >= end) { if (--running === 0) finish(); return; }
  const req = http.request(url, { method: 'POST', agent, headers }, (res) => {
    res.resume();
    res.on('end', () => { if (Date.now() >= warmUntil) { if (!start) start = Date.now(); res.statusCode === 200 ? ok++ : errors++; } one(); });
  });
  req.on('error', () => { errors++; one(); });
  req.end(body);
}
function finish() { const seconds = (Date.now() - start) / 1000; process.stdout.write(JSON.stringify({ requests: ok, errors, seconds })); agent.destroy(); }
for (let i = 0; i < Number(conns); i++) { running++; one(); }
`;

/** A bare node:http server answering every request with fixed JSON after reading the body. */
const BARE_SERVER = `
const http = require('node:http');
const answer = Buffer.from(process.argv[1]);
const server = http.createServer({ keepAliveTimeout: 5000 }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => { JSON.parse(Buffer.concat(chunks).toString()); res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length }); res.end(answer); });
});
server.listen(0, '127.0.0.1', () => process.stdout.write('listening on http://127.0.0.1:' + server.address().port + '\\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

/** SSE timing client: alternates direct and gateway fetches; prints per-request ttfb/total (ms). */
const SSE_CLIENT = `
const http = require('node:http');
const [directUrl, gatewayUrl, key, ticket, iterations, think] = process.argv.slice(1);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const body = JSON.stringify({ model: 'claude-sonnet-4-5', stream: true, max_tokens: 10, think: Number(think), messages: [{ role: 'user', content: 'stream' }] });
function once(url, headers) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint(); let first = 0n; let bytes = 0;
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      res.on('data', (c) => { if (!first) first = process.hrtime.bigint(); bytes += c.length; });
      res.on('end', () => { const end = process.hrtime.bigint(); resolve({ status: res.statusCode, bytes, ttfb: Number(first - t0) / 1e6, total: Number(end - t0) / 1e6 }); });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
(async () => {
  const out = { direct: [], gateway: [] };
  for (let i = 0; i < Number(iterations) + 1; i++) {
    const d = await once(directUrl, {});
    const g = await once(gatewayUrl, { authorization: 'Bearer ' + key, 'x-off-peak-ticket-id': ticket, 'anthropic-version': '2023-06-01' });
    if (d.status !== 200 || g.status !== 200) throw new Error('bad status ' + d.status + ' ' + g.status);
    if (i > 0) { out.direct.push(d); out.gateway.push(g); } // first pair warms connections
  }
  process.stdout.write(JSON.stringify(out));
  agent.destroy();
})().catch((e) => { console.error(e); process.exit(1); });
`;

function runNode(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`child exited ${code}: ${out}`))));
  });
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); NaN elsewhere. */
function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return Number.NaN;
  }
}

async function startServerProcess(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ url: string; pid: number | undefined; stop(): Promise<void> }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], cwd: root, env: { ...process.env, ...env } });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  return {
    url,
    pid: child.pid,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const round = (n: number, digits = 3) => Number(n.toFixed(digits));

async function api<T>(base: string, method: string, pathname: string, body?: unknown, key = KEY): Promise<T> {
  const res = await fetch(base + pathname, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${pathname}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function waitingLongPolls(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${OPS_TOKEN}` } })).text();
  return Number(/^offpeak_long_polls (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
}

async function until(condition: () => Promise<boolean> | boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `n` sequential takes by the taker user; their latencies in ms. */
async function takeLatencies(base: string, prefix: string, n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await api(base, 'POST', '/api/v1/off-peak/ticket', { task_id: `${prefix}-${i}` }, TAKER_KEY);
    times.push(performance.now() - started);
  }
  return times;
}

/** FLOOD_POLLS status long-polls at once from the flood user, over 64 keep-alive connections. */
function startLongPollFlood(base: string, ticketIds: string[]): { answered: () => number; stop(): void } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const body = JSON.stringify({ ticket_ids: ticketIds, wait_ms: 120_000 });
  let answered = 0;
  for (let i = 0; i < FLOOD_POLLS; i++) {
    const req = http.request(
      `${base}/api/v1/off-peak/ticket/status`,
      {
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${FLOOD_KEY}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => (answered += 1));
      },
    );
    req.on('error', () => undefined); // stop() cuts the waiting ones
    req.end(body);
  }
  return { answered: () => answered, stop: () => agent.destroy() };
}

async function main(): Promise<void> {
  const work = mkdtempSync(path.join(os.tmpdir(), 'offpeak-gw-bench-'));
  const bundle = path.join(root, 'node_modules/.cache/offpeak-gateway-bench/gateway.js');
  mkdirSync(path.dirname(bundle), { recursive: true });
  await esbuild.build({
    entryPoints: [path.join(root, 'src/gateway/main.ts')],
    outfile: bundle,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['better-sqlite3'],
    mainFields: ['module', 'main'],
    logLevel: 'silent',
  });

  const upstream = await FakeAnthropicUpstream.start({
    // Every request streams ~2 MB; `think` in the body sets the delay before the first byte.
    defaultReply: (request) => ({
      kind: 'large_stream',
      bytes: SSE_BYTES,
      delayMs: Number((request.body as { think?: number })?.think ?? 0),
    }),
  });
  const gateway = await startServerProcess(
    [
      bundle,
      '--port',
      '0',
      '--db',
      path.join(work, 'bench.sqlite'),
      '--status-max-wait-ms',
      '120000',
      '--always-open',
      '--promote-interval-ms',
      '0',
      '--test-hooks',
      '--segment-capacity',
      '60',
      '--max-live-tickets',
      '1000',
      '--quota-takes',
      '2000',
      '--upstream-url',
      upstream.url,
      '--log-level',
      'silent',
    ],
    {
      // Keys and the operations token through the environment, not argv.
      OFFPEAK_GATEWAY_USERS: `bench:${KEY},flood:${FLOOD_KEY},taker:${TAKER_KEY}`,
      OFFPEAK_GATEWAY_OPS_TOKEN: OPS_TOKEN,
    },
  );
  try {
    // 100 tickets: 60 promoted to ready, 40 still queued (positions computed per status call).
    const ids: string[] = [];
    for (let i = 0; i < 100; i++)
      ids.push((await api<{ ticket_id: string }>(gateway.url, 'POST', '/api/v1/off-peak/ticket', { task_id: `bench-${i}` })).ticket_id);
    await api(gateway.url, 'POST', '/__test/tick');
    const statusBody = JSON.stringify({ ticket_ids: ids });
    const sample = await (
      await fetch(`${gateway.url}/api/v1/off-peak/ticket/status`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: statusBody,
      })
    ).text();
    const bare = await startServerProcess(['-e', BARE_SERVER, sample]);

    const gatewayRps: number[] = [];
    const bareRps: number[] = [];
    const perCpu = { gateway: { requests: 0, cpu: 0 }, bare: { requests: 0, cpu: 0 } };
    for (let r = 0; r < ROUNDS; r++) {
      for (const [side, server, into] of [
        ['bare', bare, bareRps],
        ['gateway', gateway, gatewayRps],
      ] as const) {
        const target = `${server.url}/api/v1/off-peak/ticket/status`;
        const cpuBefore = cpuSeconds(server.pid);
        const result = JSON.parse(
          await runNode(['-e', LOADGEN, target, statusBody, String(CONNECTIONS), String(ROUND_MS), `Bearer ${KEY}`]),
        ) as { requests: number; errors: number; seconds: number };
        if (result.errors > 0) throw new Error(`load generator saw ${result.errors} errors against ${target}`);
        into.push(result.requests / result.seconds);
        perCpu[side].cpu += cpuSeconds(server.pid) - cpuBefore;
        perCpu[side].requests += result.requests; // (warm-up requests are uncounted but use CPU: slightly pessimistic for both)
      }
    }
    await bare.stop();

    // SSE: one ready ticket is made active by the first request and stays active (3 h window).
    const ticket = ids[0];
    const think = JSON.parse(
      await runNode([
        '-e',
        SSE_CLIENT,
        `${upstream.url}/v1/messages`,
        `${gateway.url}/api/anthropic/v1/messages?beta=true`,
        KEY,
        ticket,
        String(SSE_ITERATIONS),
        String(THINK_MS),
      ]),
    ) as Record<'direct' | 'gateway', { bytes: number; ttfb: number; total: number }[]>;
    const zero = JSON.parse(
      await runNode([
        '-e',
        SSE_CLIENT,
        `${upstream.url}/v1/messages`,
        `${gateway.url}/api/anthropic/v1/messages?beta=true`,
        KEY,
        ticket,
        String(SSE_ITERATIONS),
        '0',
      ]),
    ) as Record<'direct' | 'gateway', { bytes: number; ttfb: number; total: number }[]>;
    if (think.direct.some((x) => x.bytes < SSE_BYTES) || think.gateway.some((x) => x.bytes < SSE_BYTES))
      throw new Error('a stream was shorter than 2 MB');

    // Long-poll flood: the flood user's polls watch 100 queued tickets of its own.
    const floodIds: string[] = [];
    for (let i = 0; i < 100; i++)
      floodIds.push(
        (await api<{ ticket_id: string }>(gateway.url, 'POST', '/api/v1/off-peak/ticket', { task_id: `flood-${i}` }, FLOOD_KEY)).ticket_id,
      );
    const maxWaiting = DEFAULT_CONFIG.maxLongPollsPerUser;
    await takeLatencies(gateway.url, 'warm', 20);
    const idleTakes: number[] = [];
    const floodTakes: number[] = [];
    const waitingDuringFlood: number[] = [];
    for (let r = 0; r < FLOOD_ROUNDS; r++) {
      idleTakes.push(...(await takeLatencies(gateway.url, `idle-${r}`, TAKES_PER_ROUND)));
      const flood = startLongPollFlood(gateway.url, floodIds);
      await until(
        async () => flood.answered() >= FLOOD_POLLS - maxWaiting && (await waitingLongPolls(gateway.url)) === maxWaiting,
        'the flood to settle at the per-user maximum',
      );
      floodTakes.push(...(await takeLatencies(gateway.url, `flood-${r}`, TAKES_PER_ROUND)));
      waitingDuringFlood.push(await waitingLongPolls(gateway.url));
      flood.stop();
      await until(async () => (await waitingLongPolls(gateway.url)) === 0, 'the flood to end');
    }
    if (waitingDuringFlood.some((n) => n !== maxWaiting))
      throw new Error(`the flood user held ${waitingDuringFlood.join('/')} long-polls, not ${maxWaiting}`);
    const takeIdleP50 = median(idleTakes);
    const takeFloodP50 = median(floodTakes);

    const statusRps = Math.max(...gatewayRps);
    const bestBare = Math.max(...bareRps);
    const result = {
      status_rps: round(statusRps, 1),
      bare_rps: round(bestBare, 1),
      status_vs_bare: round(statusRps / bestBare),
      sse_ttfb_ratio: round(median(think.gateway.map((x) => x.ttfb)) / median(think.direct.map((x) => x.ttfb))),
      sse_total_ratio: round(median(think.gateway.map((x) => x.total)) / median(think.direct.map((x) => x.total))),
      sse_ttfb_ratio_zero_think: round(median(zero.gateway.map((x) => x.ttfb)) / median(zero.direct.map((x) => x.ttfb))),
      sse_ttfb_added_ms_zero_think: round(median(zero.gateway.map((x) => x.ttfb)) - median(zero.direct.map((x) => x.ttfb))),
      sse_total_ratio_zero_think: round(median(zero.gateway.map((x) => x.total)) / median(zero.direct.map((x) => x.total))),
      take_p50_ms_idle: round(takeIdleP50),
      take_p50_ms_under_longpoll_flood: round(takeFloodP50),
      take_flood_vs_idle_ratio: round(takeFloodP50 / takeIdleP50),
      details: {
        status_rps_rounds: { gateway: gatewayRps.map((x) => round(x, 1)), bare: bareRps.map((x) => round(x, 1)) },
        status_rps_median: {
          gateway: round(median(gatewayRps), 1),
          bare: round(median(bareRps), 1),
          ratio: round(median(gatewayRps) / median(bareRps)),
        },
        status_ratio_per_round_median: round(median(gatewayRps.map((g, i) => g / bareRps[i]))),
        status_rps_per_server_cpu_second: {
          gateway: round(perCpu.gateway.requests / perCpu.gateway.cpu, 1),
          bare: round(perCpu.bare.requests / perCpu.bare.cpu, 1),
          ratio: round(perCpu.gateway.requests / perCpu.gateway.cpu / (perCpu.bare.requests / perCpu.bare.cpu)),
        },
        connections: CONNECTIONS,
        round_ms: ROUND_MS,
        status_tickets: { total: 100, ready: 60, queued: 40 },
        sse_bytes: think.gateway[0].bytes,
        sse_think_ms: THINK_MS,
        sse_ms_median: {
          direct_ttfb: round(median(think.direct.map((x) => x.ttfb))),
          gateway_ttfb: round(median(think.gateway.map((x) => x.ttfb))),
          direct_total: round(median(think.direct.map((x) => x.total))),
          gateway_total: round(median(think.gateway.map((x) => x.total))),
          direct_ttfb_zero_think: round(median(zero.direct.map((x) => x.ttfb))),
          gateway_ttfb_zero_think: round(median(zero.gateway.map((x) => x.ttfb))),
          direct_total_zero_think: round(median(zero.direct.map((x) => x.total))),
          gateway_total_zero_think: round(median(zero.gateway.map((x) => x.total))),
        },
        iterations: SSE_ITERATIONS,
        machine: { cpus: os.cpus().length, loadavg_1m: round(os.loadavg()[0], 2), node: process.version },
        longpoll_flood: {
          polls_sent: FLOOD_POLLS,
          ids_per_poll: floodIds.length,
          waiting_per_round: waitingDuringFlood,
          answered_at_once_per_round: FLOOD_POLLS - maxWaiting,
          takes_per_round: TAKES_PER_ROUND,
          rounds: FLOOD_ROUNDS,
          take_p90_ms: {
            idle: round(idleTakes.sort((a, b) => a - b)[Math.floor(idleTakes.length * 0.9)]),
            flood: round(floodTakes.sort((a, b) => a - b)[Math.floor(floodTakes.length * 0.9)]),
          },
        },
        // What the status route's CPU profile showed (node --cpu-prof on the gateway under this load).
        status_profile_note:
          'issue 22 item 4 (0.185 per CPU-second before): the AsyncLocalStorage of the one-process stores stayed enabled after the first take, so node ran its promise hooks on every promise of the process (promiseInitHook, lookupPublicResource, _propagate: ~15% of the gateway samples); it is now enabled only while a transaction runs. Status also read each of its 100 tickets and queue positions with its own await (statusJson 12% of samples, now ~5% with one batch read), and the duplicate-key tokenizer scanned every ticket id (~4%, now skipped when the colons in the body prove every key distinct). The per-address connection guard costs one Map lookup per request (not visible in the profile).',
        goals: {
          status_vs_bare: '>= 0.5',
          status_rps_per_server_cpu_second_ratio: '>= 0.4',
          sse_ttfb_ratio: '<= 1.1',
          sse_total_ratio: '<= 1.05',
          take_flood_vs_idle_ratio: '<= 3',
        },
      },
    };
    publish('gateway', result);
  } finally {
    await gateway.stop();
    await upstream.close();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
