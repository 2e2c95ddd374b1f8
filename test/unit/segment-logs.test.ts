// Segment logs on a real temp directory: their order, the replay with separators, the cap for
// huge logs, and the terminal feed that replays them and then attaches to a live segment.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { listSegmentLogs, SegmentLogReplay, segmentDirOf } from '../../src/agent/runtime/segment-logs';
import type { SegmentOutcome, TerminalView } from '../../src/agent/runtime/segment-outcome';
import { TaskTerminalFeed, type TerminalFeedSource } from '../../src/agent/runtime/task-terminal-feed';
import type { SegmentEndReason, TaskStatus } from '../../src/core/types';

const TASK = 'task-1';

describe('segment logs', () => {
  let runtimeDir: string;
  beforeEach(() => (runtimeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'seglogs-'))));
  afterEach(() => fs.rmSync(runtimeDir, { recursive: true, force: true }));

  function writeSegment(ordinal: number, startedAt: number, log: string | Buffer, running?: { hostPid: number; host?: string }): string {
    const dir = segmentDirOf(runtimeDir, TASK, ordinal, startedAt);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'agent.log'), log);
    if (running) fs.writeFileSync(path.join(dir, 'agent.pid'), JSON.stringify({ pid: 1, hostPid: running.hostPid, host: running.host }));
    return dir;
  }

  it('lists segments by ticket ordinal then start time (not by directory name), ignoring other entries', async () => {
    // "segment-10-…" sorts before "segment-2-…" as a string: the order must be numeric.
    writeSegment(10, 5_000, 'ten');
    writeSegment(2, 3_000, 'two-b');
    writeSegment(2, 2_000, 'two-a');
    writeSegment(1, 9_000, 'one');
    fs.mkdirSync(path.join(runtimeDir, 'tasks', TASK, 'not-a-segment'));
    const segments = await listSegmentLogs(runtimeDir, TASK);
    assert.deepEqual(
      segments.map((s) => [s.ordinal, s.startedAt, s.bytes]),
      [
        [1, 9_000, 3],
        [2, 2_000, 5],
        [2, 3_000, 5],
        [10, 5_000, 3],
      ],
    );
    assert.deepEqual(await listSegmentLogs(runtimeDir, 'no-such-task'), []);
  });

  it('replays every segment in order with a separator each and how it ended (from the ledger)', async () => {
    writeSegment(1, 1_000, 'first segment output\n');
    writeSegment(1, 2_000, 'after a reload\n');
    writeSegment(2, 3_000, 'resumed with ticket 2\n');
    const replay = new SegmentLogReplay({ runtimeDir, taskId: TASK, hostPid: -1 });
    const text = await replay.next([
      { ordinal: 1, endReason: 'expired' },
      { ordinal: 2, endReason: 'completed' },
    ]);
    const order = [
      'Segment 1 · ticket 1',
      'first segment output',
      'Segment 1 ended: interrupted',
      'Segment 2 · ticket 1',
      'after a reload',
      'Segment 2 ended (time limit); the task resumes with a new ticket',
      'Segment 3 · ticket 2',
      'resumed with ticket 2',
      'Segment 3 ended: the task completed',
    ];
    const positions = order.map((needle) => text.indexOf(needle));
    assert.ok(
      positions.every((p) => p >= 0),
      `every part present in:\n${text}`,
    );
    assert.deepEqual(
      [...positions].sort((a, b) => a - b),
      positions,
      'in running order',
    );
    assert.equal(await replay.next(), '', 'nothing new: nothing shown twice');
  });

  it('shows only what a growing log added since the last call, and its end once it ended', async () => {
    const dir = writeSegment(1, 1_000, 'line 1\n', { hostPid: 4242 });
    const replay = new SegmentLogReplay({ runtimeDir, taskId: TASK, hostPid: -1 });
    const first = await replay.next();
    assert.match(first, /Segment 1 · ticket 1/);
    assert.match(first, /line 1/);
    assert.doesNotMatch(first, /ended/, 'still running in another window');
    fs.appendFileSync(path.join(dir, 'agent.log'), 'line 2\n');
    fs.rmSync(path.join(dir, 'agent.pid'));
    const second = await replay.next([{ ordinal: 1, endReason: 'completed' }]);
    assert.doesNotMatch(second, /line 1|Segment 1 ·/);
    assert.match(second, /^line 2\n──── Segment 1 ended: the task completed/);
  });

  it("platform: two hosts' pid records (Remote-SSH hosts sharing a home folder): the same host pid on another machine is another process, so its segment is replayed from disk; this machine's is left to the live view, and a record without a machine is judged by its pid", async () => {
    writeSegment(1, 1_000, 'on the other machine\n', { hostPid: 77, host: 'far' });
    writeSegment(2, 2_000, 'on this machine\n', { hostPid: 77, host: 'near' });
    writeSegment(3, 3_000, 'an older record\n', { hostPid: 77 });
    const text = await new SegmentLogReplay({ runtimeDir, taskId: TASK, hostPid: 77, host: 'near' }).next();
    assert.match(text, /on the other machine/);
    assert.doesNotMatch(text, /on this machine/);
    assert.doesNotMatch(text, /an older record/);
  });

  it('leaves a segment this process runs to the live view, and never replays a segment marked live', async () => {
    writeSegment(1, 1_000, 'old output\n');
    const runningHere = writeSegment(2, 2_000, 'live output\n', { hostPid: 77 });
    const replay = new SegmentLogReplay({ runtimeDir, taskId: TASK, hostPid: 77 });
    const text = await replay.next();
    assert.match(text, /old output/);
    assert.doesNotMatch(text, /live output/);
    replay.markLive(runningHere);
    fs.rmSync(path.join(runningHere, 'agent.pid'));
    assert.equal(await replay.next(), '');
    assert.match(await replay.liveHeader(runningHere), /Segment 2 · ticket 2/);
  });

  it('caps a huge replay to the newest output, starts at a line, and says how much was left out', async () => {
    const line = (n: number) => `line ${String(n).padStart(6, '0')} ${'x'.repeat(50)}\n`;
    const big = Array.from({ length: 20_000 }, (_, i) => line(i)).join('');
    writeSegment(1, 1_000, 'oldest segment\n'.repeat(1000));
    writeSegment(2, 2_000, big);
    const maxBytes = 64 * 1024;
    const replay = new SegmentLogReplay({ runtimeDir, taskId: TASK, maxBytes, hostPid: -1 });
    const text = await replay.next([{ ordinal: 2, endReason: 'completed' }]);
    assert.ok(Buffer.byteLength(text) < maxBytes + 2_000, `bounded: ${Buffer.byteLength(text)} bytes`);
    assert.match(text, /of older output not shown \(the terminal shows the last 64\.0 KiB\); the full logs are in /);
    assert.ok(text.includes(path.join(runtimeDir, 'tasks', TASK)), 'names where the full logs are');
    assert.doesNotMatch(text, /oldest segment/, 'the oldest output is the part left out');
    assert.match(text, /Segment 1 · ticket 1[\s\S]*of this segment not shown/);
    assert.ok(text.includes(line(19_999)), 'the newest line is there');
    // Whatever follows the cut notice of segment 2 starts with a whole line.
    const afterCut = text.slice(text.lastIndexOf('of this segment not shown\n') + 'of this segment not shown\n'.length);
    assert.match(afterCut, /^line \d{6} x{50}\n/);
  });
});

/** A live segment standing in for a SegmentRun: the feed only attaches, reads `running` and writes input. */
class LiveSegment {
  running = true;
  readonly views = new Set<TerminalView>();
  readonly input: string[] = [];
  constructor(
    readonly logFile: string,
    private readonly soFar: string,
  ) {}
  attach(view: TerminalView): () => void {
    if (this.soFar) view.write(this.soFar);
    this.views.add(view);
    return () => this.views.delete(view);
  }
  writeInput(data: string): void {
    this.input.push(data);
  }
  output(text: string): void {
    for (const view of this.views) view.write(text);
  }
  end(outcome: SegmentOutcome): void {
    this.running = false;
    for (const view of this.views) view.end?.(outcome);
  }
}

describe('task terminal feed', () => {
  let runtimeDir: string;
  beforeEach(() => (runtimeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'feed-'))));
  afterEach(() => fs.rmSync(runtimeDir, { recursive: true, force: true }));

  function setup() {
    const state: { segment?: LiveSegment; status: TaskStatus; tickets: { ordinal: number; endReason: SegmentEndReason | null }[] } = {
      status: 'completed',
      tickets: [],
    };
    const source: TerminalFeedSource = {
      runtimeDir,
      segment: () => state.segment,
      taskStatus: () => state.status,
      tickets: () => state.tickets,
    };
    let shown = '';
    const feed = new TaskTerminalFeed(
      TASK,
      (t) => (shown += t),
      () => source,
      { hostPid: process.pid },
    );
    return { state, feed, shown: () => shown };
  }

  it('a finished task: replays its segments and is read-only (typing says so, once)', async () => {
    for (const [ordinal, at, text] of [
      [1, 1_000, 'segment one\n'],
      [2, 2_000, 'segment two\n'],
    ] as const) {
      const dir = segmentDirOf(runtimeDir, TASK, ordinal, at);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'agent.log'), text);
    }
    const { state, feed, shown } = setup();
    state.tickets = [
      { ordinal: 1, endReason: 'expired' },
      { ordinal: 2, endReason: 'completed' },
    ];
    await feed.sync();
    assert.match(
      shown(),
      /Segment 1 · ticket 1[\s\S]*segment one[\s\S]*Segment 2 · ticket 2[\s\S]*segment two[\s\S]*Segment 2 ended: the task completed/,
    );
    feed.input('y');
    feed.input('\r');
    assert.equal(shown().match(/typing does nothing/g)?.length, 1);
    await feed.sync();
    assert.equal(shown().match(/segment one/g)?.length, 1, 'a second Show adds nothing');
  });

  it('a running task: earlier segments from disk, then the live one with its separator, input to the agent', async () => {
    const first = segmentDirOf(runtimeDir, TASK, 1, 1_000);
    fs.mkdirSync(first, { recursive: true });
    fs.writeFileSync(path.join(first, 'agent.log'), 'before the segment end\n');
    const second = segmentDirOf(runtimeDir, TASK, 2, 2_000);
    fs.mkdirSync(second, { recursive: true });
    fs.writeFileSync(path.join(second, 'agent.log'), 'resumed so far\n');
    fs.writeFileSync(path.join(second, 'agent.pid'), JSON.stringify({ pid: 1, hostPid: process.pid }));
    const { state, feed, shown } = setup();
    state.status = 'running';
    state.tickets = [
      { ordinal: 1, endReason: 'expired' },
      { ordinal: 2, endReason: null },
    ];
    const live = new LiveSegment(path.join(second, 'agent.log'), 'resumed so far\n');
    state.segment = live;
    await feed.sync();
    live.output('live line\n');
    assert.match(
      shown(),
      /before the segment end\n──── Segment 1 ended \(time limit\); the task resumes with a new ticket[\s\S]*Segment 2 · ticket 2[\s\S]*resumed so far\nlive line\n$/,
    );
    assert.equal(shown().match(/resumed so far/g)?.length, 1, 'the live segment is not also replayed from disk');
    feed.input('y\r');
    assert.deepEqual(live.input, ['y\n']);
    assert.doesNotMatch(shown(), /typing does nothing/);

    live.end({ kind: 'completed', summary: 'done', exitCode: 0 });
    fs.rmSync(path.join(second, 'agent.pid'));
    state.segment = undefined;
    assert.match(shown(), /\[off-peak\] Task completed\.\n$/);
    await feed.sync();
    assert.equal(shown().match(/resumed so far/g)?.length, 1, 'the ended live segment is not replayed after it ended');
    feed.input('x');
    assert.deepEqual(live.input, ['y\n']);
    assert.match(shown(), /typing does nothing/);
  });

  it('item 6: a live segment ending at its time limit reads "Segment 1 ended (time limit); the task resumes with a new ticket", not an error', async () => {
    const dir = segmentDirOf(runtimeDir, TASK, 1, 1_000);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'agent.log'), '');
    fs.writeFileSync(path.join(dir, 'agent.pid'), JSON.stringify({ pid: 1, hostPid: process.pid }));
    const { state, feed, shown } = setup();
    state.status = 'running';
    state.tickets = [{ ordinal: 1, endReason: null }];
    const live = new LiveSegment(path.join(dir, 'agent.log'), '');
    state.segment = live;
    await feed.sync();
    live.end({ kind: 'segment-expired' } as SegmentOutcome);
    assert.match(shown(), /\n\[off-peak\] Segment 1 ended \(time limit\); the task resumes with a new ticket\.\n$/);
    assert.doesNotMatch(shown(), /error|✗/i);
  });

  it('a task running in another window: says so and shows its log so far', async () => {
    const dir = segmentDirOf(runtimeDir, TASK, 1, 1_000);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'agent.log'), 'output in the other window\n');
    fs.writeFileSync(path.join(dir, 'agent.pid'), JSON.stringify({ pid: 1, hostPid: -5 }));
    const { state, feed, shown } = setup();
    state.status = 'running';
    await feed.sync();
    assert.match(shown(), /runs in another VS Code window[\s\S]*output in the other window/);
  });

  it('a task that never ran says there is no output yet', async () => {
    const { state, feed, shown } = setup();
    state.status = 'queued';
    await feed.sync();
    assert.equal(shown(), '[off-peak] No output yet: this task has not run.\n');
  });
});
