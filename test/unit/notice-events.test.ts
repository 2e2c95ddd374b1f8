// What a window's notice becomes in the away notifications' outbox (docs/flows.md#away-notifications),
// with the check flow's outcomes (docs/flows.md#checks), and what their message lets out.
import assert from 'node:assert/strict';
import type { PendingAsk } from '../../src/agent/questions/asks';
import { outcomeOf } from '../../src/core/outcome';
import { awayEventOf } from '../../src/engine/notice-events';
import { INCLUDE_NOTHING } from '../../src/notify/notify-include';
import { messageOf } from '../../src/notify/notify-message';

const task = { workspacePath: '/home/me/project', endedAt: 1_700_000_000_000 };
const completed = {
  kind: 'completed' as const,
  taskId: 'task-abcdef123',
  title: 'Fix the parser',
  outcome: outcomeOf({ status: 'completed' }),
};
const ready = { ...completed, outcome: outcomeOf({ status: 'completed', check: { state: 'passed', round: 2 } }) };
const checkFailed = { ...completed, outcome: outcomeOf({ status: 'completed', check: { state: 'failed', round: 2 } }) };
const time = () => '07:00';

describe('away notifications: notices and check outcomes as events', () => {
  it('a completed task without a check says completed; with a passed check it is ready for review, with the round', () => {
    assert.deepEqual(awayEventOf(completed, task).event, {
      kind: 'ready',
      taskId: 'task-abcdef123',
      title: 'Fix the parser',
      folder: '/home/me/project',
    });
    assert.equal(messageOf(awayEventOf(completed, task).event, INCLUDE_NOTHING, time).text, 'Task task-abc completed.');
    const passed = awayEventOf(ready, task, { command: 'npm test', state: 'passed', round: 2, output: 'ok' });
    assert.deepEqual(passed.event, {
      kind: 'ready',
      taskId: 'task-abcdef123',
      title: 'Fix the parser',
      folder: '/home/me/project',
      checks: { command: 'npm test', round: 2 },
    });
    assert.equal(messageOf(passed.event, INCLUDE_NOTHING, time).text, 'Task task-abc: ready for review · checks pass (round 2).');
    assert.equal(
      messageOf(passed.event, { ...INCLUDE_NOTHING, checkCommand: true }, time).text,
      'Task task-abc: ready for review · checks pass (npm test, round 2).',
    );
  });

  it('a completed task whose check never passed is "check failed", its command and output sent only when opted in', () => {
    const failed = awayEventOf(checkFailed, task, {
      command: 'npm test -- --token=CMDSECRET',
      state: 'failed',
      round: 2,
      output: 'AssertionError at src/secret.ts OUTPUTSECRET',
    });
    assert.equal(failed.event.kind, 'check-failed');
    assert.equal(failed.key, awayEventOf(completed, task).key, 'one key per result, whatever its check says');
    const quiet = messageOf(failed.event, INCLUDE_NOTHING, time);
    assert.equal(quiet.text, 'Task task-abc: check failed after 2 rounds.');
    assert.ok(!JSON.stringify(quiet).includes('SECRET'));
    const told = messageOf(failed.event, { ...INCLUDE_NOTHING, checkCommand: true, failureReason: true }, time);
    assert.match(told.text, /CMDSECRET/);
    assert.match(told.text, /OUTPUTSECRET/);
  });

  it('a question is keyed by its id and carries the tool name; a check row that is not final claims no checks', () => {
    const ask = { id: 'ask-9', tool: 'Bash', summary: 'run rm -rf build' } as PendingAsk;
    const asked = awayEventOf({ kind: 'input-needed', taskId: 't', title: 'x', ask }, task);
    assert.equal(asked.key, 'ask:t:ask-9');
    assert.equal(asked.event.kind === 'needs-input' && asked.event.tool, 'Bash');
    assert.equal(awayEventOf(completed, task, { command: 'npm test', state: 'checking', round: 1, output: null }).event.kind, 'ready');
  });
});
