// Two scheduler PROCESSES on one sql.js DB file (real file lock, real persistence) claim and
// dispatch 1,000 tasks, one claim per round: no task may be dispatched twice, none forgotten.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemClock } from '../../src/core/clock';
import { TaskStore } from '../../src/store';
import { tsNodeArgv } from './runtime-helpers';

const TASKS = 1_000;

function runWorker(dbDir: string, log: string, name: string): Promise<{ name: string; rounds: number; claimRounds: number; dispatched: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...tsNodeArgv('test/integration/scheduler-worker.ts'), dbDir, log, name], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim())) : reject(new Error(`worker ${name} exited ${code}: ${err}`))));
  });
}

describe('scheduler: two processes on one DB', function () {
  let root: string;
  beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'sched2-'))));
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it(`never dispatches a task twice over ${TASKS} claim rounds`, async () => {
    const dbDir = path.join(root, 'db');
    const store = await TaskStore.open({ directory: dbDir, clock: systemClock, durable: false, watch: false });
    await store.mutate((tx) => {
      for (let i = 0; i < TASKS; i++) {
        tx.tasks.insert({ title: `t${i}`, prompt: 'p', permissionMode: 'plan', workspacePath: '/w', serverTicketId: `T-${i}`, schedulable: true });
      }
    });
    const log = path.join(root, 'dispatches.log');
    const [a, b] = await Promise.all([runWorker(dbDir, log, 'A'), runWorker(dbDir, log, 'B')]);
    const lines = fs.readFileSync(log, 'utf8').trim().split('\n');
    const perTask = new Map<string, number>();
    for (const line of lines) {
      const id = line.split(' ')[0];
      perTask.set(id, (perTask.get(id) ?? 0) + 1);
    }
    const twice = [...perTask].filter(([, n]) => n > 1);
    assert.deepEqual(twice, [], 'tasks dispatched more than once');
    assert.equal(perTask.size, TASKS, 'every task dispatched');
    // Counted by the dispatcher, so a claim made by the scheduler's own start-up tick (outside the
    // worker's counted loop) is counted too.
    assert.equal(a.dispatched + b.dispatched, TASKS, 'one dispatch per claim, 1,000 in all');
    assert.ok(a.rounds + b.rounds >= TASKS, 'at least 1,000 claim rounds');
    assert.ok(a.dispatched > 0 && b.dispatched > 0, `both processes took part (A ${a.dispatched}, B ${b.dispatched})`);
    const running = store.read((tx) => tx.tasks.list({ status: 'running' }));
    assert.equal(running.length, TASKS);
    assert.ok(running.every((t) => !t.claimRunning), 'no claim left behind');
    await store.close();
  });
});
