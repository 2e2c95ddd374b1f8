/** A deleted task's files go with it: its segment directories and its reference-agent session. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { systemClock } from '../../src/core/clock';
import { engineDirs, HostEngine } from '../../src/engine/host-engine';
import { taskLeftovers } from '../../src/engine/task-leftovers';
import { tsNodeArgv } from './runtime-helpers';

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
    engine = await HostEngine.start({
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
    });
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

  it('names that are not a single safe path segment are never turned into paths', () => {
    const where = { runtimeDir: '/x/runtime', referenceSessionsDir: '/x/sessions' };
    assert.deepEqual(taskLeftovers(where, { id: '../etc', sessionId: '../../passwd' }), []);
    assert.deepEqual(taskLeftovers(where, { id: 'a/b', sessionId: null }), []);
    assert.deepEqual(taskLeftovers(where, { id: 'ok-1', sessionId: 's.1' }), ['/x/runtime/tasks/ok-1', '/x/sessions/s.1.jsonl']);
  });
});
