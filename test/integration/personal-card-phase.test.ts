// What a running task's card says in personal mode (docs/flows.md#task-states): nothing there
// admits a model request the user waits for, so once the agent runs the card says "Waiting for the
// model" until its first model answer and "Running" after; team mode keeps "Waiting for
// admission". Over the real webview protocol (panel-link), the real TaskService on a sql.js file
// and the real reference gateway on loopback; the runtime's part is written as the runtime writes it.
import assert from 'node:assert/strict';
import { setupView, type SetupInputs } from '../../src/panel/setup-line';
import { phaseLabel } from '../../webview/format';
import { connect } from './panel-link';
import { World, taskInput, startRunning } from './service-harness';

const base: SetupInputs = {
  mode: 'gateway',
  gatewayUrl: 'http://gateway.invalid',
  agentSetting: 'auto',
  agent: 'reference',
  modelCredential: 'claudeLogin',
  baseUrl: 'https://api.anthropic.com',
  hasModelKey: true,
  hours: 'always',
  hoursOpenAt: null,
};

async function until<T>(what: string, fn: () => T | undefined): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("the running card's state in personal and team mode", function () {
  this.timeout(60_000);
  let world: World;
  let link: ReturnType<typeof connect> | undefined;
  afterEach(async () => {
    link?.close();
    link = undefined;
    await world?.close();
  });

  /** The card's label of one running task, before and after its first model answer. */
  async function labels(inputs: SetupInputs): Promise<{ started: string; answered: string }> {
    world = await World.start();
    const w = await world.openWindow();
    link = connect({ service: w.service, store: w.store, clock: world.clock, hasApiKey: () => true, setup: async () => setupView(inputs) });
    link.webview.channel.ready();
    const t = await w.service.create(taskInput());
    await world.promote();
    await world.advance(15_000);
    const ticketId = await startRunning(w, t.id);
    const labelOf = async (version: number) => {
      const state = await until('a new snapshot', () => {
        const s = link!.webview.states.at(-1);
        return s && s.version > version && s.tasks.some((c) => c.id === t.id && c.status === 'running') ? s : undefined;
      });
      const card = state.tasks.find((c) => c.id === t.id)!;
      return { label: phaseLabel(card, state.now), version: state.version };
    };
    link.controller.schedulePush();
    const started = await labelOf(0);
    await w.store.mutate((tx) => tx.tickets.markAdmitted(ticketId));
    link.controller.schedulePush();
    const answered = await labelOf(started.version);
    return { started: started.label, answered: answered.label };
  }

  it('item 6: personal mode says "Waiting for the model", then "Running"; never "Waiting for admission"', async () => {
    const { started, answered } = await labels({ ...base, mode: 'personal', gatewayUrl: '' });
    assert.equal(started, 'Waiting for the model');
    assert.equal(answered, 'Running');
  });

  it('team mode: "Waiting for admission" until the gateway admitted a model request, then "Running"', async () => {
    const { started, answered } = await labels(base);
    assert.equal(started, 'Waiting for admission');
    assert.equal(answered, 'Running');
  });
});
