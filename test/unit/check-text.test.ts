// What the card and History say of a task's check (docs/flows.md#checks), one wording for both.
import assert from 'node:assert/strict';
import { checkText } from '../../webview/check-line';
import type { CheckView } from '../../src/protocol/check-view';
import type { OffPeakTask } from '../../src/core/types';
import { applyConfirmation, mergeConfirmation } from '../../src/panel/workplace-panel';
import type { TaskCheck, TaskIsolation } from '../../src/store';

const view = (state: CheckView['state'], round: number, exitCode: number | null = null): CheckView => ({
  command: 'npm test -- --grep "api"',
  state,
  round,
  exitCode,
  output: 'out',
});

describe('check line wording', () => {
  it('says ready with the command whole and the round it passed in, or how many rounds failed and how the last ended', () => {
    assert.equal(checkText(view('passed', 2, 0)), 'Ready for review · checks pass (npm test -- --grep "api", round 2)');
    assert.equal(checkText(view('failed', 2, 3)), 'Check failed after 2 rounds (npm test -- --grep "api", exit code 3)');
    assert.equal(checkText(view('failed', 1, null)), 'Check failed after 1 round (npm test -- --grep "api", stopped)');
    assert.equal(checkText(view('checking', 1)), 'Checking (round 1): npm test -- --grep "api"');
    assert.equal(checkText(view('fixing', 1, 1)), 'Check failed in round 1: the agent is fixing it (npm test -- --grep "api")');
    assert.equal(checkText(view('pending', 0)), 'Check after the agent\'s turn: npm test -- --grep "api"');
  });
});

describe('Merge and Apply of a task whose check failed', () => {
  const task = { title: 'fix it', prompt: 'p', workspacePath: '/w/repo' } as OffPeakTask;
  const isolation = { branch: 'offpeak/fix-it' } as TaskIsolation;
  const row = (state: TaskCheck['state']): TaskCheck => ({
    taskId: 't',
    command: 'npm test',
    state,
    round: 2,
    exitCode: 1,
    output: '',
    updatedAt: 0,
  });

  it('stay available and say the check failed in their confirmation; a passed check adds nothing', () => {
    for (const confirm of [mergeConfirmation, applyConfirmation]) {
      assert.match(
        confirm(task, isolation, row('failed')).detail ?? '',
        /^Its check did not pass: "npm test" still failed after 2 rounds \(exit code 1\)\. /,
      );
      assert.equal(confirm(task, isolation, row('passed')).detail, confirm(task, isolation).detail);
    }
  });
});
