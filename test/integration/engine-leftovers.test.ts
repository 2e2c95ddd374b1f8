/** A deleted task's files go with it: its segment directories and its reference-agent session. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { systemClock } from '../../src/core/clock';
import { engineDirs, HostEngine } from '../../src/engine/host-engine';
import { taskLeftovers } from '../../src/engine/task-leftovers';
import { tsNodeArgv } from './runtime-helpers';
import { createServiceBackend } from '../../src/panel/service-backend';
import { NO_ASKS } from './panel-link';

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
    referenceAgent: { command: process.execPath, argsPrefix: tsNodeArgv('src/reference-agent/main.ts') },
    claudeCommand: () => 'claude',
    keepAwake: () => false,
    ...extra,
  });
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

  it('deleting a task removes runtime/tasks/<id>/ and its session transcript; other tasks\' files stay; storage is 0700', async () => {
    const storageDir = path.join(root, 'globalStorage');
    engine = await startEngine(storageDir);
    const where = engineDirs(storageDir);
    const tasks = await engine.store.mutate((tx) =>
      ['gone', 'kept'].map((id) => {
        tx.tasks.insert({ id, title: id, prompt: 'p', permissionMode: 'default', workspacePath: root, serverTicketId: `tk-${id}`, schedulable: true });
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
    assert.equal(await engine.service.delete('gone'), true);
    assert.deepEqual(taskLeftovers(where, tasks[0]).map((p) => fs.existsSync(p)), [false, false], 'the deleted task\'s files are gone');
    assert.deepEqual(taskLeftovers(where, tasks[1]).map((p) => fs.existsSync(p)), [true, true], 'the other task\'s files stay');
    assert.equal((fs.statSync(storageDir).mode & 0o777).toString(8), '700');
    assert.equal((fs.statSync(where.runtimeDir).mode & 0o777).toString(8), '700');
  });

  it('issue 22: an archived task keeps its files until Delete from the panel, which brings it back, removes its files and leaves nothing in either file', async () => {
    const storageDir = path.join(root, 'globalStorage');
    engine = await startEngine(storageDir, { historyKeep: () => ({ keepDays: 90, keepCount: 1 }) });
    const where = engineDirs(storageDir);
    for (const id of ['old', 'new']) {
      await engine.store.mutate((tx) => {
        tx.tasks.insert({ id, title: id, prompt: 'p', permissionMode: 'default', workspacePath: root, serverTicketId: `tk-${id}`, schedulable: true });
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
    assert.deepEqual(taskLeftovers(where, task).map((p) => fs.existsSync(p)), [true, true], 'an archived task keeps its files');
    const backend = createServiceBackend(engine.service, engine.store, {
      hasApiKey: async () => true,
      setApiKey: async () => undefined,
      workspaces: () => [],
      models: () => [],
      configs: () => undefined,
      reloadConfigs: async () => undefined,
      openTerminal: async () => undefined,
      confirm: async () => assert.fail('a finished task is deleted without a question'),
      notice: () => undefined,
    }, NO_ASKS, engine.archive);
    assert.deepEqual(await backend.delete({ taskId: 'old' }), { done: true });
    assert.equal(engine.service.getTask('old'), undefined);
    assert.equal(await engine.archive.isArchived('old'), false);
    assert.deepEqual(taskLeftovers(where, task).map((p) => fs.existsSync(p)), [false, false], 'its files went with it');
    assert.deepEqual((await backend.historyPage({ offset: 0, limit: 50 })).rows.map((r) => r.taskId), ['new']);
  });

  it('names that are not a single safe path segment are never turned into paths', () => {
    const where = { runtimeDir: '/x/runtime', referenceSessionsDir: '/x/sessions' };
    assert.deepEqual(taskLeftovers(where, { id: '../etc', sessionId: '../../passwd' }), []);
    assert.deepEqual(taskLeftovers(where, { id: 'a/b', sessionId: null }), []);
    assert.deepEqual(taskLeftovers(where, { id: 'ok-1', sessionId: 's.1' }), ['/x/runtime/tasks/ok-1', '/x/sessions/s.1.jsonl']);
  });
});
