// docs/flows.md#schedules-and-chains: when a task waiting for another may go, is skipped, and the
// cycle check at creation.
import assert from 'node:assert/strict';
import { chainCycle, chainGate, type Predecessor } from '../../src/core/task-chain';

const pred = (over: Partial<Predecessor>): Predecessor => ({ title: 'Refactor', status: 'completed', check: 'none', ...over });

describe('task chains (docs/flows.md#schedules-and-chains)', () => {
  it('waits while the task it follows has not ended, goes once it completed', () => {
    for (const status of ['queued', 'paused', 'running', 'needs_input'] as const)
      assert.deepEqual(chainGate(pred({ status })), { kind: 'wait' }, status);
    assert.deepEqual(chainGate(pred({})), { kind: 'go' });
    assert.deepEqual(chainGate(pred({ check: 'passed' })), { kind: 'go' });
  });

  it('with a check, waits for it to pass and is skipped when it fails', () => {
    assert.deepEqual(chainGate(pred({ check: 'pending' })), { kind: 'wait' });
    assert.deepEqual(chainGate(pred({ check: 'failed' })), { kind: 'skip', reason: "Skipped: Refactor's check failed." });
  });

  it('is skipped with the reason when the task it follows failed, was cancelled or deleted', () => {
    assert.deepEqual(chainGate(pred({ status: 'failed' })), { kind: 'skip', reason: 'Skipped: Refactor failed.' });
    assert.deepEqual(chainGate(pred({ status: 'cancelled' })), { kind: 'skip', reason: 'Skipped: Refactor was cancelled.' });
    assert.equal(chainGate(null).kind, 'skip');
  });

  it('refuses a cycle: the chain back to the task is named; a chain that ends is fine', () => {
    const after = new Map([
      ['A', 'B'],
      ['B', 'C'],
    ]);
    const afterOf = (id: string): string | undefined => after.get(id);
    assert.deepEqual(chainCycle('C', 'A', afterOf), ['C', 'A', 'B', 'C']);
    assert.deepEqual(chainCycle('A', 'A', afterOf), ['A', 'A']);
    assert.equal(chainCycle('D', 'A', afterOf), null);
    const knot = new Map([
      ['X', 'Y'],
      ['Y', 'X'],
    ]);
    assert.equal(
      chainCycle('N', 'X', (id) => knot.get(id)),
      null,
      'an older knot not through N ends the walk',
    );
  });
});
