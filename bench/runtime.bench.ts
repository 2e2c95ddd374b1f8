/**
 * Runtime costs (issue 5). Writes bench/results/runtime.json and prints it.
 *
 * ready_to_spawn   from the moment the REAL gateway promotes a queued ticket to ready (its promote
 *                  timer run on demand) to the moment the agent process was spawned: long-poll
 *                  status answer -> ledger/aggregate update -> service wake -> scheduler claim
 *                  transaction -> window dispatch -> proxy start -> spawn -> guarded markRunning.
 *                  Real store file, real service, real scheduler and runtime, reference agent.
 * proxy ratios     the local ticket proxy's overhead: the same streaming Messages request sent
 *                  directly vs through the proxy; median time to first body byte and median total
 *                  time, proxy / direct. The upstream is the scripted fake (a fixture standing in
 *                  for a model API) paced like a model: 100 ms to the first byte, then ~64 KB of
 *                  SSE text deltas 4 ms apart (~0.7 s). Topology as in the product: the client
 *                  (the agent) and the upstream (the gateway) are separate processes, the proxy
 *                  lives in this one (the extension host). Absolute medians are printed as details.
 * claude_ready_to_first_request
 *                  the same promotion, with the REAL Claude Code CLI as the agent (installed under
 *                  .tools/ by scripts/setup-claude-code.ts), to its first model request arriving
 *                  through the proxy and the real gateway at the model upstream: what a user waits
 *                  between "admitted" and "the model is working". Goal: at most 1,500 ms.
 * claude_first_request_vs_spawn_floor
 *                  that time over the floor measured beside it in each round: a bare `claude -p`
 *                  spawn -> its first model request (bench/claude-start.ts); the median of the
 *                  per-round ratios. Goal: at most 1.5. `claude_start_breakdown_p50_ms` says where
 *                  the time goes: dispatch, workplace, spawn, the agent's own start-up, and the
 *                  start's record (snapshot, running mark), which overlaps the agent's start-up.
 * park_answer_to_admitted
 *                  Allow on a task parked on its question -> the resumed segment's first admitted
 *                  model request (bench/park-answer.ts). Goal: at most 2,000 ms.
 * usage_accounting_sse_total_ratio
 *                  a 2 MB streamed answer through the proxy with token-usage accounting vs
 *                  without (the geometric mean of two proxies without it), same run: the median of
 *                  per-round ratios and its bootstrap 95% interval, beside the control ratio
 *                  (the two proxies without accounting) and the load (bench/usage-accounting.ts).
 *                  Goal: at most 1.02.
 * notify_event_to_send_ms
 *                  a task's notice in the window that ran it -> the away notification's receiver
 *                  has the post from the lease holder, another window (bench/notify-send.ts).
 *                  Goal: at most 1,000 ms.
 * check_end_to_resume_ms
 *                  a task's check command exits non-zero -> the resumed session's first model
 *                  request reaches the model API (bench/check-resume.ts). Goal: at most 2,000 ms.
 * usage: npm run bench -- runtime
 *        node --import tsx bench/runtime.bench.ts --only notify   (that figure alone, into runtime.json)
 *        node --import tsx bench/runtime.bench.ts --only check    (that figure alone, into runtime.json)
 *        node --import tsx bench/runtime.bench.ts --only proxy    (the proxy ratios alone, into runtime.json)
 */
import path from 'node:path';
import { claudeStartRounds, type ClaudeStartRound } from './claude-start';
import { parkAnswerToAdmitted } from './park-answer';
import { notifyEventToSend } from './notify-send';
import { checkEndToResume } from './check-resume';
import { TicketProxy } from '../src/agent/proxy/ticket-proxy';
import type { RuntimeEvent } from '../src/agent/runtime/task-runtime';
import { makeGitWorkspace, startWorld, USER_KEY } from '../test/e2e/gateway-fixture';
import { startTestEngine, waitFor } from '../test/e2e/test-engine';
import { usageAccountingOverhead } from './usage-accounting';
import { publish, publishOne, sized } from './mode';
import { machineLoad, median, percentile, startUpstreamProcess, streamRounds } from './proxy-stream';

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;

async function readyToSpawn(iterations: number): Promise<number[]> {
  const world = await startWorld({ promoteIntervalMs: 0, segmentCapacity: 1 });
  world.upstream.setDefaultReply({ kind: 'text', text: 'done' });
  const events: RuntimeEvent[] = [];
  const host = await startTestEngine({
    storageDir: path.join(world.root, 'globalStorage'),
    gatewayUrl: world.gateway.url,
    apiKey: USER_KEY,
    agent: 'reference',
    onEvent: (e) => events.push(e),
  });
  const samples: number[] = [];
  try {
    await waitFor(() => host.service.isLeader, 'the lease');
    const ws = makeGitWorkspace(world.root);
    for (let i = 0; i < iterations; i++) {
      const task = await host.service.create({
        title: `b${i}`,
        prompt: 'say done',
        permissionMode: 'bypassPermissions',
        workspacePath: ws,
      });
      // Let the client settle into waiting on the queued ticket (its long-poll in flight).
      await waitFor(() => host.service.getTask(task.id)?.queuePosition !== null, 'a queued snapshot', 30_000);
      await new Promise((r) => setTimeout(r, 300));
      const readyAt = Date.now();
      const promoted = (await world.gateway.tick()).promoted ?? [];
      if (promoted.length === 0) throw new Error('the promote tick promoted nothing');
      const started = await waitFor(() => events.find((e) => e.type === 'segment-started' && e.taskId === task.id), 'the spawn', 30_000);
      // The agent's spawn itself (the event comes once the start is recorded, which now overlaps the agent's start-up).
      const event = started as { at: number; startup?: { spawnedAt: number } };
      samples.push((event.startup?.spawnedAt ?? event.at) - readyAt);
      await waitFor(() => host.service.getTask(task.id)?.status === 'completed', 'completion', 60_000);
    }
  } finally {
    await host.dispose();
    await world.close();
  }
  return samples;
}

type Samples = { ttfb: number[]; total: number[] };

/** The same paced streaming request straight to the upstream and through a proxy, interleaved (bench/proxy-stream.ts). */
async function proxyOverhead(rounds: number): Promise<{ direct: Samples; proxied: Samples }> {
  const upstream = await startUpstreamProcess();
  const warmup = 5;
  await upstream.script(
    new Array(2 * (rounds + warmup)).fill({ kind: 'large_stream', bytes: 64 * 1024, deltaChars: 400, eventDelayMs: 4, delayMs: 100 }),
  );
  const proxy = await TicketProxy.start({ upstreamBaseUrl: upstream.url, apiKey: 'user-key', ticketId: 'T-bench' });
  try {
    const rows = await streamRounds([`${upstream.url}/v1/messages`, `${proxy.baseUrl}/v1/messages`], rounds, warmup);
    const side = (i: number): Samples => ({ ttfb: rows.map((r) => r[i].ttfb), total: rows.map((r) => r[i].total) });
    return { direct: side(0), proxied: side(1) };
  } finally {
    await proxy.close();
    upstream.stop();
  }
}

async function main(): Promise<void> {
  const loadAtStart = machineLoad();
  if (process.argv.includes('--only') && process.argv.includes('notify')) {
    const notifySamples = await notifyEventToSend(sized(10, 2));
    publishOne('runtime', { notify_event_to_send_ms: round(percentile(notifySamples, 50), 1), notify_event_to_send_load: loadAtStart });
    console.log('details:', JSON.stringify({ notify_event_to_send_samples_ms: notifySamples, load_at_start: loadAtStart }));
    return;
  }
  if (process.argv.includes('--only') && process.argv.includes('check')) {
    const checkSamples = await checkEndToResume(sized(8, 2));
    publishOne('runtime', { check_end_to_resume_ms: round(percentile(checkSamples, 50), 1), check_end_to_resume_load: loadAtStart });
    console.log(
      'details:',
      JSON.stringify({ check_end_to_resume_samples_ms: checkSamples.map((s) => round(s, 1)), load_at_start: loadAtStart }),
    );
    return;
  }
  if (process.argv.includes('--only') && process.argv.includes('proxy')) {
    const only = await proxyOverhead(sized(60, 4));
    publishOne('runtime', {
      proxy_ttfb_ratio: round(median(only.proxied.ttfb) / median(only.direct.ttfb)),
      proxy_total_ratio: round(median(only.proxied.total) / median(only.direct.total)),
    });
    console.log('details:', JSON.stringify({ load_at_start: loadAtStart, load_after: machineLoad() }));
    return;
  }
  const spawnSamples = await readyToSpawn(sized(15, 2));
  const overhead = await proxyOverhead(sized(60, 4));
  const claudeRounds = await claudeStartRounds(sized(10, 1));
  const claudeSamples = claudeRounds.map((r) => r.totalMs);
  const claudeP50 = (key: keyof ClaudeStartRound) => round(median(claudeRounds.map((r) => r[key])), 1);
  const parkSamples = await parkAnswerToAdmitted(sized(8, 1));
  const notifySamples = await notifyEventToSend(sized(10, 2));
  const checkSamples = await checkEndToResume(sized(8, 2));
  // BENCH_ACCOUNTING_ROUNDS: fewer rounds when the run must be short (the result records how many ran).
  const accounting = await usageAccountingOverhead(Number(process.env.BENCH_ACCOUNTING_ROUNDS ?? sized(2016, 3)));
  const result = {
    ready_to_spawn_p50_ms: round(percentile(spawnSamples, 50), 1),
    ready_to_spawn_p95_ms: round(percentile(spawnSamples, 95), 1),
    proxy_ttfb_ratio: round(median(overhead.proxied.ttfb) / median(overhead.direct.ttfb)),
    proxy_total_ratio: round(median(overhead.proxied.total) / median(overhead.direct.total)),
    claude_ready_to_first_request_p50_ms: round(percentile(claudeSamples, 50), 1),
    claude_first_request_vs_spawn_floor: round(median(claudeRounds.map((r) => r.totalMs / r.floorMs)), 2),
    claude_bare_spawn_to_first_request_p50_ms: claudeP50('floorMs'),
    claude_start_breakdown_p50_ms: {
      promotion_to_dispatch: claudeP50('dispatchMs'),
      workplace: claudeP50('workplaceMs'),
      proxy_and_spawn: claudeP50('spawnMs'),
      agent_spawn_to_first_request: claudeP50('agentMs'),
      start_recorded_after_spawn: claudeP50('recordMs'),
    },
    park_answer_to_admitted_ms: round(percentile(parkSamples, 50), 1),
    notify_event_to_send_ms: round(percentile(notifySamples, 50), 1),
    check_end_to_resume_ms: round(percentile(checkSamples, 50), 1),
    usage_accounting_sse_total_ratio: round(accounting.ratio),
    usage_accounting_sse_total_ratio_ci95: accounting.ratioCi95.map((r) => round(r)),
    // Beside it, to judge the noise: two proxies that both do not account (1.0 on a quiet machine),
    // the spread of the per-round ratios, and what else ran (load average, cores).
    usage_accounting_control_ratio: round(accounting.controlRatio),
    usage_accounting_round_ratio_p25_p75: [round(accounting.ratioP25), round(accounting.ratioP75)],
    usage_accounting_rounds: accounting.rounds,
    usage_accounting_cpu_ms_per_answer: { off: round(accounting.cpuOffMs, 2), on: round(accounting.cpuOnMs, 2) },
    usage_accounting_meter_ms_per_answer: round(accounting.meterMsPerAnswer),
    // The meter's own time over the proxy's CPU per answer without it: the accounting's share, free of the wall-clock noise above.
    usage_accounting_meter_share_of_proxy_cpu: round(accounting.meterMsPerAnswer / accounting.cpuOffMs),
    usage_accounting_chunks_per_answer: accounting.chunksPerAnswer,
    usage_accounting_load: { before: accounting.loadBefore, after: accounting.loadAfter },
    load_at_start: loadAtStart,
  };
  const details = {
    ready_to_spawn_samples_ms: spawnSamples.map((s) => round(s, 1)),
    claude_ready_to_first_request_samples_ms: claudeSamples.map((s) => round(s, 1)),
    claude_bare_spawn_to_first_request_samples_ms: claudeRounds.map((r) => round(r.floorMs, 1)),
    park_answer_to_admitted_samples_ms: parkSamples.map((s) => round(s, 1)),
    notify_event_to_send_samples_ms: notifySamples,
    check_end_to_resume_samples_ms: checkSamples.map((s) => round(s, 1)),
    direct_ttfb_p50_ms: round(median(overhead.direct.ttfb)),
    proxy_ttfb_p50_ms: round(median(overhead.proxied.ttfb)),
    direct_total_p50_ms: round(median(overhead.direct.total)),
    proxy_total_p50_ms: round(median(overhead.proxied.total)),
    usage_accounting_off_total_p50_ms: round(accounting.offTotalP50Ms),
    usage_accounting_on_total_p50_ms: round(accounting.onTotalP50Ms),
  };
  publish('runtime', result);
  console.log('details:', JSON.stringify(details));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
