import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteTicketStore } from '../../src/gateway/stores/sqlite-store';
import { MemoryTicketStore, type TicketStore } from '../../src/gateway/stores/store';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

async function checkTransactions(store: TicketStore): Promise<void> {
  const order: string[] = [];
  // Nested: joins the outer transaction (waiting for the mutex here would never end).
  const nested = await store.transaction(async () => {
    await tick();
    return store.transaction(async () => {
      await tick();
      return 'inner';
    });
  });
  assert.equal(nested, 'inner');
  // Concurrent: one after the other, never interleaved.
  const a = store.transaction(async () => {
    order.push('a start');
    await tick();
    await tick();
    order.push('a end');
  });
  const b = store.transaction(async () => {
    order.push('b start');
    await tick();
    order.push('b end');
  });
  await Promise.all([a, b]);
  assert.deepEqual(order, ['a start', 'a end', 'b start', 'b end']);
  // After the last transaction ended, a call from outside waits for a running one again.
  order.length = 0;
  let release!: () => void;
  const held = store.transaction(() => new Promise<void>((resolve) => (release = resolve)).then(() => void order.push('held end')));
  const next = store.transaction(async () => void order.push('next'));
  await tick();
  assert.deepEqual(order, []);
  release();
  await Promise.all([held, next]);
  assert.deepEqual(order, ['held end', 'next']);
  // A failed transaction rejects and the next one still runs.
  await assert.rejects(
    store.transaction(() => Promise.reject(new Error('boom'))),
    /boom/,
  );
  assert.equal(await store.transaction(() => Promise.resolve(7)), 7);
}

describe('gateway one-process stores: transactions (context enabled only while one runs)', () => {
  it('memory store: a nested call joins the outer transaction, concurrent ones run one after the other, also after the context was switched off', async () => {
    await checkTransactions(new MemoryTicketStore());
  });

  it('SQLite store: the same', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'offpeak-gw-tx-'));
    const store = new SqliteTicketStore(path.join(dir, 'tickets.sqlite'));
    try {
      await checkTransactions(store);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
