/**
 * usage_accounting_sse_total_ratio (issue 19 item 5): what reading the token usage costs on the
 * agent's path. The same 2 MB streamed Messages answer, sent as fast as the sockets take it (no
 * model pacing: the worst case for the proxy), through local ticket proxies in this process (the
 * extension host): one reads the usage from the stream as it passes, two do not
 * (`usageAccounting: false`, the same proxy code otherwise), made afresh (with a new client and
 * new connections) for every batch of six rounds, each batch in the next of the six orders of
 * the three (the order they are made in, their places in the client's list). Topology and client
 * as in bench/proxy-stream.ts. Every round sends one answer through each of the three, a batch's
 * rounds in each of the six orders once, after one warm-up round. A round's ratio is its total
 * time with accounting over the GEOMETRIC mean of its two totals without (both are "without
 * accounting": using both halves the baseline's own noise; the arithmetic mean of two times,
 * which are skewed to the slow side, is larger than a typical one and would flatter the ratio);
 * the figure is the MEDIAN OF THE PER-ROUND RATIOS
 * (so load that comes and goes hits both sides of a ratio alike), with a bootstrap 95% interval
 * (whole batches resampled: a proxy's connections can make it a little faster or slower for its
 * whole batch). Goal: at most 1.02.
 * Reported beside it so a reader can judge the noise: the control ratio (the second proxy
 * without accounting / the first, same rounds: 1.0 on a perfect machine), the spread of the
 * per-round ratios, the machine's load average before and after, the CPU time this process
 * spends per answer with and without accounting (answers sent through one proxy at a time), and
 * the meter's own time per answer: one answer's chunks as this process received them from the
 * upstream, fed to a new meter again and again (the median).
 */
import http from 'node:http';
import { TicketProxy } from '../src/agent/proxy/ticket-proxy';
import { UsageMeter } from '../src/agent/proxy/usage-meter';
import { machineLoad, median, percentile, startUpstreamProcess, streamRounds, type UpstreamProcess } from './proxy-stream';

const STREAM_BYTES = 2 * 1024 * 1024;
/**
 * Rounds per batch (fresh proxies, client process and connections; the fake upstream, which keeps
 * every byte it sends, is reset): 6, so that a batch visits the three proxies in every order once.
 */
const BATCH_ROUNDS = 6;
const WARMUP_ROUNDS = 1;

export interface UsageAccountingResult {
  /** Median of the per-round ratios total time with accounting / the geometric mean of the two without. */
  ratio: number;
  /** Bootstrap 95% interval of that median (batches resampled). */
  ratioCi95: [number, number];
  /** The same for two proxies that both do not account: the run's noise. */
  controlRatio: number;
  /** 25th and 75th percentile of the per-round accounting ratios. */
  ratioP25: number;
  ratioP75: number;
  offTotalP50Ms: number;
  onTotalP50Ms: number;
  rounds: number;
  /** CPU ms of this process (the proxies) per answer. */
  cpuOffMs: number;
  cpuOnMs: number;
  /** The meter alone: ms to read one answer's usage from its chunks, and how many chunks it came in. */
  meterMsPerAnswer: number;
  chunksPerAnswer: number;
  loadBefore: ReturnType<typeof machineLoad>;
  loadAfter: ReturnType<typeof machineLoad>;
}

type Role = 'off' | 'on' | 'control';
/** The six orders of the three proxies. */
const ORDERS: Role[][] = [
  ['off', 'on', 'control'],
  ['on', 'control', 'off'],
  ['control', 'off', 'on'],
  ['control', 'on', 'off'],
  ['off', 'control', 'on'],
  ['on', 'off', 'control'],
];

const answers = (n: number): unknown[] => new Array(n).fill({ kind: 'large_stream', bytes: STREAM_BYTES, deltaChars: 1000 });

export async function usageAccountingOverhead(rounds: number): Promise<UsageAccountingResult> {
  const loadBefore = machineLoad();
  const upstream = await startUpstreamProcess();
  let reports = 0;
  const proxy = (ticketId: string, usageAccounting: boolean): Promise<TicketProxy> =>
    TicketProxy.start({
      upstreamBaseUrl: upstream.url,
      apiKey: 'user-key',
      ticketId,
      usageAccounting,
      onEvent: (e) => void (e.type === 'usage' && reports++),
    });
  const url = (p: TicketProxy): string => `${p.baseUrl}/v1/messages`;
  // Fresh proxies, client and connections every batch, each batch in the next of the six orders:
  // the order they are made in and their places in the client's list. Which proxy is a little
  // faster for a whole batch (the client's first connection, which the warm-up opens first, port,
  // allocation) then varies from batch to batch instead of favouring one side of the ratio.
  const trio = async (batch: number): Promise<{ placed: Role[]; made: Record<Role, TicketProxy> }> => {
    const placed = ORDERS[batch % ORDERS.length];
    const made = {} as Record<Role, TicketProxy>;
    for (const role of placed) made[role] = await proxy(`T-${role}-${batch}`, role === 'on');
    return { placed, made };
  };
  const ratios: number[] = [];
  /** The per-round ratios of each batch. */
  const batches: number[][] = [];
  const controls: number[] = [];
  const offTotals: number[] = [];
  const onTotals: number[] = [];
  let sent = 0;
  const cpu = (await trio(0)).made;
  try {
    for (let done = 0, batchNo = 0; done < rounds; done += BATCH_ROUNDS, batchNo++) {
      const batch = Math.min(BATCH_ROUNDS, rounds - done);
      const { placed, made } = await trio(batchNo);
      try {
        await upstream.script(answers(3 * (batch + WARMUP_ROUNDS)));
        batches.push([]);
        for (const row of await streamRounds(
          placed.map((role) => url(made[role])),
          batch,
          WARMUP_ROUNDS,
        )) {
          if (row.some((t) => t.bytes < STREAM_BYTES))
            throw new Error(`an answer was ${Math.min(...row.map((t) => t.bytes))} bytes, not 2 MB`);
          const [offT, onT, controlT] = (['off', 'on', 'control'] as const).map((role) => row[placed.indexOf(role)].total);
          ratios.push(onT / Math.sqrt(offT * controlT));
          batches[batches.length - 1].push(ratios[ratios.length - 1]);
          controls.push(controlT / offT);
          offTotals.push(offT);
          onTotals.push(onT);
        }
      } finally {
        for (const p of Object.values(made)) await p.close();
      }
      sent += batch + WARMUP_ROUNDS;
    }
    if (reports !== sent) throw new Error(`the accounting proxy reported ${reports} usages for ${sent} answers`);
    const cpuRounds = Math.max(3, Math.floor(rounds / 4));
    const cpuOff = [await cpuPerAnswer(upstream, url(cpu.off), cpuRounds), await cpuPerAnswer(upstream, url(cpu.off), cpuRounds)];
    const cpuOn = [await cpuPerAnswer(upstream, url(cpu.on), cpuRounds), await cpuPerAnswer(upstream, url(cpu.on), cpuRounds)];
    const meter = await meterAlone(upstream);
    return {
      ratio: median(ratios),
      ratioCi95: bootstrapMedianCi95(batches),
      controlRatio: median(controls),
      ratioP25: percentile(ratios, 25),
      ratioP75: percentile(ratios, 75),
      offTotalP50Ms: median(offTotals),
      onTotalP50Ms: median(onTotals),
      rounds: ratios.length,
      cpuOffMs: Math.min(...cpuOff),
      cpuOnMs: Math.min(...cpuOn),
      meterMsPerAnswer: meter.ms,
      chunksPerAnswer: meter.chunks,
      loadBefore,
      loadAfter: machineLoad(),
    };
  } finally {
    for (const p of Object.values(cpu)) await p.close();
    upstream.stop();
  }
}

/** CPU ms of this process per answer through one proxy (the client and the upstream are other processes). */
async function cpuPerAnswer(upstream: UpstreamProcess, url: string, rounds: number): Promise<number> {
  await upstream.script(answers(rounds + 1));
  const before = process.cpuUsage();
  await streamRounds([url], rounds, 1);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / (rounds + 1);
}

/** One answer's chunks as received here, then the median time a new meter takes to read them. */
async function meterAlone(upstream: UpstreamProcess): Promise<{ ms: number; chunks: number }> {
  await upstream.script(answers(1));
  const chunks = await new Promise<Buffer[]>((resolve, reject) => {
    const got: Buffer[] = [];
    const req = http.request(`${upstream.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      res.on('data', (c: Buffer) => got.push(c));
      res.on('end', () => resolve(got));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify({ model: 'm', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'stream please' }] }));
  });
  const times: number[] = [];
  for (let i = 0; i < 60; i++) {
    const t = performance.now();
    const meter = UsageMeter.forContentType('text/event-stream')!;
    for (const c of chunks) meter.feed(c);
    if (!meter.finish()) throw new Error('the meter read no usage from the answer');
    if (i >= 10) times.push(performance.now() - t);
  }
  return { ms: median(times), chunks: chunks.length };
}

/**
 * 95% interval of the median of all samples, from 2,000 resamples of whole groups (a fixed-seed
 * generator: the same samples give the same interval).
 */
function bootstrapMedianCi95(groups: number[][]): [number, number] {
  let seed = 0x9e3779b9;
  const random = (): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const medians: number[] = [];
  for (let b = 0; b < 2000; b++) medians.push(median(groups.flatMap(() => groups[Math.floor(random() * groups.length)])));
  return [percentile(medians, 2.5), percentile(medians, 97.5)];
}
