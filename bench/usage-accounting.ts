/**
 * usage_accounting_sse_total_ratio (issue 19 item 5): what reading the token usage costs on the
 * agent's path. The same 2 MB streamed Messages answer, sent as fast as the sockets take it (no
 * model pacing: the worst case for the proxy), through two local ticket proxies in this process
 * (the extension host): one reads the usage from a copy of the stream as it passes
 * (eventsource-parser), one does not. Median total time of the answer at the client, accounting
 * / no accounting, interleaved in one run. Topology as in runtime.bench.ts: the scripted fake
 * upstream (a fixture standing in for the gateway and the model API) and the measuring client
 * are separate processes. Goal: at most 1.02.
 * Details, because wall times on a shared machine are noisy: the same ratio for two proxies that
 * both do NOT account (the noise floor of this run), and the CPU time this process spends per
 * answer with and without accounting (answers sent one proxy at a time, process.cpuUsage).
 */
import { spawn } from 'node:child_process';
import { TicketProxy } from '../src/agent/ticket-proxy';

const STREAM_BYTES = 2 * 1024 * 1024;

const CLIENT_SOURCE = `
const [off, on, rounds, warmup, only] = process.argv.slice(1);
async function once(url) {
  const start = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer dummy' },
    body: JSON.stringify({ model: 'm', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'stream please' }] }) });
  const reader = res.body.getReader();
  let bytes = 0;
  for (;;) { const { done, value } = await reader.read(); if (value) bytes += value.length; if (done) break; }
  return { total: performance.now() - start, bytes };
}
(async () => {
  for (let i = 0; i < Number(warmup); i++) { await once(off); await once(on); }
  const out = { off: [], on: [], bytes: 0 };
  for (let i = 0; i < Number(rounds); i++) {
    // Interleaved, alternating order (or one side only, for the CPU figures).
    for (const which of only ? [only] : i % 2 === 0 ? ['off', 'on'] : ['on', 'off']) {
      const r = await once(which === 'off' ? off : on);
      out[which].push(r.total); out.bytes = r.bytes;
    }
  }
  process.stdout.write(JSON.stringify(out));
})();
`;

async function startUpstreamProcess(): Promise<{ url: string; prepare(answers: number): Promise<void>; stop(): void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/fake-anthropic-upstream.ts', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`fake upstream exited ${code}`)));
  });
  return {
    url,
    /** Forgets what it sent so far (it keeps every byte for tests) and scripts `answers` 2 MB streams. */
    async prepare(answers) {
      await fetch(`${url}/__fake/reset`, { method: 'POST' });
      const replies = new Array(answers).fill({ kind: 'large_stream', bytes: STREAM_BYTES, deltaChars: 1000 });
      const res = await fetch(`${url}/__fake/enqueue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(replies) });
      if (!res.ok) throw new Error(`enqueue failed: ${res.status} ${await res.text()}`);
    },
    stop: () => child.kill('SIGTERM'),
  };
}

export interface UsageAccountingSamples {
  /** Total time of each answer at the client, ms: without and with accounting, interleaved. */
  off: number[];
  on: number[];
  /** The same for two proxies that both do not account (the run's noise floor). */
  controlA: number[];
  controlB: number[];
  /** CPU ms of this process (the proxies) per answer, answers sent through one proxy at a time. */
  cpuOffMs: number;
  cpuOnMs: number;
  /** Bytes of one answer as the client received it. */
  bytes: number;
}

type ClientResult = { off: number[]; on: number[]; bytes: number };

function runClient(offUrl: string, onUrl: string, rounds: number, warmup: number, only?: 'off' | 'on'): Promise<ClientResult> {
  const client = spawn(process.execPath, ['-e', CLIENT_SOURCE, offUrl, onUrl, String(rounds), String(warmup), ...(only ? [only] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  client.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve, reject) =>
    client.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`bench client exited ${code}`));
      const result = JSON.parse(out) as ClientResult;
      if (result.bytes < STREAM_BYTES) return reject(new Error(`the answer was ${result.bytes} bytes, not 2 MB`));
      resolve(result);
    }),
  );
}

export async function usageAccountingOverhead(rounds: number): Promise<UsageAccountingSamples> {
  const upstream = await startUpstreamProcess();
  const warmup = 3;
  const cpuRounds = Math.max(5, Math.floor(rounds / 2));
  let reports = 0;
  const proxy = (ticketId: string, usageAccounting: boolean) =>
    TicketProxy.start({ upstreamBaseUrl: upstream.url, apiKey: 'user-key', ticketId, usageAccounting, onEvent: (e) => void (e.type === 'usage' && reports++) });
  const withAccounting = await proxy('T-on', true);
  const without = await proxy('T-off', false);
  const controlA = await proxy('T-control-a', false);
  const controlB = await proxy('T-control-b', false);
  const url = (p: TicketProxy) => `${p.baseUrl}/v1/messages`;
  try {
    await upstream.prepare(2 * (rounds + warmup));
    const measured = await runClient(url(without), url(withAccounting), rounds, warmup);
    if (reports !== rounds + warmup) throw new Error(`the accounting proxy reported ${reports} usages for ${rounds + warmup} answers`);
    await upstream.prepare(2 * (rounds + warmup));
    const control = await runClient(url(controlA), url(controlB), rounds, warmup);
    const cpuOf = async (only: 'off' | 'on') => {
      await upstream.prepare(cpuRounds);
      const before = process.cpuUsage();
      await runClient(url(without), url(withAccounting), cpuRounds, 0, only);
      const used = process.cpuUsage(before);
      return (used.user + used.system) / 1000 / cpuRounds;
    };
    const cpuOffMs = await cpuOf('off');
    const cpuOnMs = await cpuOf('on');
    return { off: measured.off, on: measured.on, controlA: control.off, controlB: control.on, cpuOffMs, cpuOnMs, bytes: measured.bytes };
  } finally {
    for (const p of [withAccounting, without, controlA, controlB]) await p.close();
    upstream.stop();
  }
}
