/** A deleted task's files go with it: its segment directories; its reference-agent session only when the user says so. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { systemClock } from '../../src/core/clock';
import { engineDirs, HostEngine } from '../../src/engine/host-engine';
import { taskLeftovers } from '../../src/engine/task-leftovers';
import { createServiceBackend } from '../../src/panel/service-backend';
import { BARE_HOST, NO_ASKS } from './panel-link';
import type { Confirmation } from '../../src/panel/confirmations';
import type { OffPeakTask } from '../../src/core/types';
import { referenceAgentArgv } from '../support/source-bundle';

/** A window's engine on `storageDir` with no gateway to reach (these tests only touch files and the store). */
function startEngine(storageDir: string, extra: Partial<Parameters<typeof HostEngine.start>[0]> = {}): Promise<HostEngine> {
  return HostEngine.start({
    storageDir,
    gatewayUrl: 'http://127.0.0.1:9',
    apiKey: async () => 'opk_test',
    clock: systemClock,
    windowId: 'w1',
    workspaceKeys: () => [],
    agent: () => 'reference',
    referenceAgent: { command: process.execPath, argsPrefix: referenceAgentArgv() },
    claudeCommand: () => 'claude',
    keepAwake: () => false,
    ...extra,
  });
}

/** Finished reference-agent tasks, each with a segment log and a session transcript on disk. */
async function finishedTasksWithFiles(engine: HostEngine, where: ReturnType<typeof engineDirs>, ids: string[]): Promise<OffPeakTask[]> {
  const tasks = await engine.store.mutate((tx) =>
    ids.map((id) => {
      tx.tasks.insert({
        id,
        title: id,
        prompt: 'p',
        permissionMode: 'default',
        workspacePath: where.runtimeDir,
        serverTicketId: `tk-${id}`,
        schedulable: true,
      });
      tx.tasks.claim(id);
      tx.tasks.markRunning(id, { sessionId: `session-${id}` });
      tx.tasks.complete(id);
      return tx.tasks.get(id)!;
    }),
  );
  for (const task of tasks) {
    const [segments, transcript] = taskLeftovers(where, task);
    fs.mkdirSync(path.join(segments, 'segment-1-1'), { recursive: true });
    fs.writeFileSync(path.join(segments, 'segment-1-1', 'agent.log'), 'log');
    fs.writeFileSync(path.join(segments, 'segment-1-1', 'prompt.txt'), 'prompt');
    fs.mkdirSync(path.dirname(transcript), { recursive: true });
    fs.writeFileSync(transcript, '{}\n');
  }
  return tasks;
}

describe('host engine: leftovers of deleted tasks', function () {
  this.timeout(60_000);
  let root: string;
  let engine: HostEngine | undefined;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(tmpdir(), 'offpeak-leftovers-'));
  });
  afterEach(async () => {
    await engine?.dispose();
    engine = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("deleting a task removes runtime/tasks/<id>/ and keeps its session transcript unless the session is deleted too; other tasks' files stay; storage is 0700", async () => {
    const storageDir = path.join(root, 'globalStorage');
    engine = await startEngine(storageDir);
    const where = engineDirs(storageDir);
    const tasks = await finishedTasksWithFiles(engine, where, ['kept-session', 'gone-session', 'other']);
    assert.equal(await engine.service.delete('kept-session'), true);
    assert.deepEqual(
      taskLeftovers(where, tasks[0]).map((p) => fs.existsSync(p)),
      [false, true],
      'its segment logs go, its session transcript stays',
    );
    assert.equal(await engine.service.delete('gone-session', { deleteSession: true }), true);
    assert.deepEqual(
      taskLeftovers(where, tasks[1]).map((p) => fs.existsSync(p)),
      [false, false],
      'asked to, the session transcript goes too',
    );
    assert.deepEqual(
      taskLeftovers(where, tasks[2]).map((p) => fs.existsSync(p)),
      [true, true],
      "the other task's files stay",
    );
    assert.equal((fs.statSync(storageDir).mode & 0o777).toString(8), '700');
    assert.equal((fs.statSync(where.runtimeDir).mode & 0o777).toString(8), '700');
  });

  it('Delete from the panel keeps the session transcript unless the user chooses "Delete Task and Session"; a task without a transcript of ours is deleted without a question', async () => {
    const storageDir = path.join(root, 'globalStorage');
    engine = await startEngine(storageDir);
    const where = engineDirs(storageDir);
    const tasks = await finishedTasksWithFiles(engine, where, ['keep', 'drop', 'claude']);
    fs.rmSync(taskLeftovers(where, tasks[2])[1]); // a Claude Code task: its session lives in Claude Code's folder
    const asked: Confirmation[] = [];
    const answers: ('action' | 'alternative')[] = ['action', 'alternative'];
    const backend = createServiceBackend(
      engine.service,
      engine.store,
      {
        ...BARE_HOST,
        confirm: async () => assert.fail('Delete asks with its second choice'),
        confirmWithAlternative: async (question) => (asked.push(question), answers.shift()),
        sessionTranscript: (task) => engine!.deletableTranscript(task),
      },
      NO_ASKS,
      engine.archive,
    );
    assert.deepEqual(await backend.delete({ taskId: 'keep' }), { done: true });
    assert.equal(asked[0]?.action, 'Delete Task');
    assert.equal(asked[0]?.alternative, 'Delete Task and Session');
    assert.match(asked[0]!.detail, /session transcript .*is kept unless/);
    assert.deepEqual(
      taskLeftovers(where, tasks[0]).map((p) => fs.existsSync(p)),
      [false, true],
      '"Delete Task" keeps the transcript',
    );
    assert.deepEqual(await backend.delete({ taskId: 'drop' }), { done: true });
    assert.deepEqual(
      taskLeftovers(where, tasks[1]).map((p) => fs.existsSync(p)),
      [false, false],
      '"Delete Task and Session" removes it',
    );
    assert.deepEqual(await backend.delete({ taskId: 'claude' }), { done: true });
    assert.equal(asked.length, 2, 'nothing to choose for a task without a transcript of ours');
    assert.deepEqual(
      engine.service.listTasks().map((t) => t.id),
      [],
    );
  });

  it('issue 22: an archived task keeps its files until Delete from the panel (with its session), which brings it back, removes its files and leaves nothing in either file', async () => {
    const storageDir = path.join(root, 'globalStorage');
    engine = await startEngine(storageDir, { historyKeep: () => ({ keepDays: 90, keepCount: 1 }) });
    const where = engineDirs(storageDir);
    for (const id of ['old', 'new']) {
      await engine.store.mutate((tx) => {
        tx.tasks.insert({
          id,
          title: id,
          prompt: 'p',
          permissionMode: 'default',
          workspacePath: root,
          serverTicketId: `tk-${id}`,
          schedulable: true,
        });
        tx.tasks.claim(id);
        tx.tasks.markRunning(id, { sessionId: `session-${id}` });
        tx.tasks.complete(id);
      });
      await new Promise((r) => setTimeout(r, 5)); // 'new' ends after 'old'
    }
    const task = engine.service.getTask('old')!;
    const [segments, transcript] = taskLeftovers(where, task);
    fs.mkdirSync(path.join(segments, 'segment-1-1'), { recursive: true });
    fs.writeFileSync(path.join(segments, 'segment-1-1', 'agent.log'), 'log');
    fs.mkdirSync(path.dirname(transcript), { recursive: true });
    fs.writeFileSync(transcript, '{}\n');
    assert.equal((await engine.archive.run()).moved, 1);
    assert.equal(engine.service.getTask('old'), undefined);
    assert.deepEqual(
      taskLeftovers(where, task).map((p) => fs.existsSync(p)),
      [true, true],
      'an archived task keeps its files',
    );
    const backend = createServiceBackend(
      engine.service,
      engine.store,
      {
        ...BARE_HOST,
        confirm: async () => assert.fail('a finished task is deleted without a yes/no question'),
        confirmWithAlternative: async () => 'alternative',
        sessionTranscript: (t) => engine!.deletableTranscript(t),
      },
      NO_ASKS,
      engine.archive,
    );
    assert.deepEqual(await backend.delete({ taskId: 'old' }), { done: true });
    assert.equal(engine.service.getTask('old'), undefined);
    assert.equal(await engine.archive.isArchived('old'), false);
    assert.deepEqual(
      taskLeftovers(where, task).map((p) => fs.existsSync(p)),
      [false, false],
      'its files went with it',
    );
    assert.deepEqual(
      (await backend.historyPage({ offset: 0, limit: 50 })).rows.map((r) => r.taskId),
      ['new'],
    );
  });

  it('names that are not a single safe path segment are never turned into paths', () => {
    const where = { runtimeDir: '/x/runtime', referenceSessionsDir: '/x/sessions' };
    assert.deepEqual(taskLeftovers(where, { id: '../etc', sessionId: '../../passwd' }), []);
    assert.deepEqual(taskLeftovers(where, { id: 'a/b', sessionId: null }), []);
    assert.deepEqual(taskLeftovers(where, { id: 'ok-1', sessionId: 's.1' }), ['/x/runtime/tasks/ok-1', '/x/sessions/s.1.jsonl']);
  });
});
