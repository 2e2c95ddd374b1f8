// The Check command box offers the folder's last command (docs/flows.md#checks). A box the user
// emptied queues no check and is not refilled next time: the folder's last command is forgotten.
// A create that has no check field at all (a follow-up, the palette without one) leaves it alone.
// Real sql.js store.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemClock } from '../../src/core/clock';
import type { CreateTaskInput } from '../../src/service';
import { keepCheck } from '../../src/service/ticket-rules';
import { TaskStore } from '../../src/store';

describe("the folder's last check command", () => {
  let root: string;
  let store: TaskStore;
  beforeEach(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-check-memory-'));
    store = await TaskStore.open({ directory: root, clock: systemClock, durable: false, watch: false });
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  /** Creates a task in `ws` as the create form would, with `checkCommand` as given (absent: no field). */
  const create = (id: string, checkCommand?: string) =>
    store.mutate((tx) => {
      const task = tx.tasks.insert({ id, title: id, prompt: 'p', permissionMode: 'default', workspacePath: '/ws', serverTicketId: null });
      const input = {
        title: id,
        prompt: 'p',
        permissionMode: 'default',
        workspacePath: '/ws',
        ...(checkCommand !== undefined ? { checkCommand } : {}),
      };
      keepCheck(tx, task, input as CreateTaskInput);
      return task.workspaceKey;
    });
  const last = (key: string) => store.read((tx) => tx.checks.lastCommandFor(key));

  it("item 8: an emptied Check command box queues no check and the folder's last command is forgotten (the box is not refilled)", async () => {
    const key = await create('a', 'npm test');
    assert.equal(last(key), 'npm test', 'remembered for the folder');
    await create('b');
    assert.equal(last(key), 'npm test', 'a create without the field leaves it');
    await create('c', '  ');
    assert.equal(
      store.read((tx) => tx.checks.get('c')),
      undefined,
      'no check queued',
    );
    assert.equal(last(key), null, 'the emptied box is what the form offers next');
  });
});
