/**
 * What the proxy benches share (runtime.bench.ts's proxy ratios, usage-accounting.ts): the
 * scripted fake upstream (a fixture standing in for the gateway and the model API) in its own
 * process, as a real gateway would be, and a measuring client in another, like the agent CLI:
 * the proxies under test (in the bench process, like the extension host) share their event loop
 * with neither end. The client sends the same streaming Messages request to each URL once per
 * round, in an order that changes every round (so drift on a shared machine hits every side
 * alike), and reports each answer's time to first body byte, total time and size.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';

export interface UpstreamProcess {
  url: string;
  /** Forgets what it answered so far (it keeps every byte it sent, for tests) and scripts these replies. */
  script(replies: unknown[]): Promise<void>;
  stop(): void;
}

export async function startUpstreamProcess(): Promise<UpstreamProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/fake-anthropic-upstream.ts', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
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
    async script(replies) {
      await fetch(`${url}/__fake/reset`, { method: 'POST' });
      const res = await fetch(`${url}/__fake/enqueue`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(replies),
      });
      if (!res.ok) throw new Error(`enqueue failed: ${res.status} ${await res.text()}`);
    },
    stop: () => child.kill('SIGTERM'),
  };
}

export interface AnswerTiming {
  /** ms to the first body byte, and to the end of the answer, at the client. */
  ttfb: number;
  total: number;
  bytes: number;
}

const CLIENT_SOURCE = `
const [urlsJson, rounds, warmup] = process.argv.slice(1);
const urls = JSON.parse(urlsJson);
async function once(url) {
  const start = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer dummy' },
    body: JSON.stringify({ model: 'm', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'stream please' }] }) });
  const reader = res.body.getReader();
  let ttfb = -1, bytes = 0;
  for (;;) { const { done, value } = await reader.read(); if (value && value.length) { if (ttfb < 0) ttfb = performance.now() - start; bytes += value.length; } if (done) break; }
  return { ttfb, total: performance.now() - start, bytes };
}
// Round k visits the URLs starting at k mod n, forwards for n rounds and backwards for the next n:
// every 2n recorded rounds (counted from the first after the warm-up) visit each URL first, second,
// ... equally often (with n = 3: every order once).
const order = (k) => { const n = urls.length, s = k % n, f = urls.map((_, i) => (s + i) % n); return Math.floor(k / n) % 2 === 0 ? f : f.reverse(); };
(async () => {
  const out = [];
  for (let r = 0; r < Number(warmup) + Number(rounds); r++) {
    const row = new Array(urls.length);
    for (const i of order(r < Number(warmup) ? r : r - Number(warmup))) row[i] = await once(urls[i]);
    if (r >= Number(warmup)) out.push(row);
  }
  process.stdout.write(JSON.stringify(out));
})();
`;

/** `rounds` rounds (after `warmup` unrecorded ones) of one answer per URL: [round][url]. */
export function streamRounds(urls: string[], rounds: number, warmup: number): Promise<AnswerTiming[][]> {
  const client = spawn(process.execPath, ['-e', CLIENT_SOURCE, JSON.stringify(urls), String(rounds), String(warmup)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  client.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve, reject) =>
    client.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as AnswerTiming[][]) : reject(new Error(`bench client exited ${code}`)),
    ),
  );
}

export function percentile(samples: number[], p: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

export const median = (s: number[]): number => percentile(s, 50);

/** The 1-minute load average (what else ran on this machine meanwhile), and the number of cores. */
export function machineLoad(): { load_1m: number; cores: number } {
  return { load_1m: Math.round(os.loadavg()[0] * 100) / 100, cores: os.cpus().length };
}
