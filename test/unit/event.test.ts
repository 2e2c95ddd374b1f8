import assert from 'node:assert/strict';
import { Emitter } from '../../src/core/event';

describe('Emitter (the one event style)', () => {
  it('calls each subscription, and a disposed one no more', () => {
    const emitter = new Emitter<number>();
    const seen: string[] = [];
    const log = (n: number) => seen.push(`log ${n}`);
    const first = emitter.event(log);
    emitter.event(log); // the same function twice: two subscriptions
    emitter.fire(1);
    first.dispose();
    first.dispose(); // disposing twice removes nothing more
    emitter.fire(2);
    assert.deepEqual(seen, ['log 1', 'log 1', 'log 2']);
  });

  it('a throwing listener neither stops the others nor reaches the firer; its error goes to onListenerError', () => {
    const errors: unknown[] = [];
    const emitter = new Emitter<string>((e) => errors.push(e));
    const seen: string[] = [];
    emitter.event(() => {
      throw new Error('listener broke');
    });
    emitter.event((v) => seen.push(v));
    assert.doesNotThrow(() => emitter.fire('x'));
    assert.deepEqual(seen, ['x']);
    assert.equal((errors[0] as Error).message, 'listener broke');
  });

  it('a listener added while firing waits for the next fire; dispose() drops every listener', () => {
    const emitter = new Emitter<void>();
    let late = 0;
    emitter.event(() => {
      emitter.event(() => (late += 1));
    });
    emitter.fire();
    assert.equal(late, 0);
    emitter.fire();
    assert.equal(late, 1);
    emitter.dispose();
    emitter.fire();
    assert.equal(late, 1);
  });
});
