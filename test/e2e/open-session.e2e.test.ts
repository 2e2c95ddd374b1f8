// "Open session" on a finished reference-agent task (docs/flows.md#open-session): with the user's
// own model API key (personal mode) the session continues interactively in a terminal, through a
// model route on the window's loopback listener that adds the key; without one, the transcript is
// shown and the reason given. The real HostEngine, the REAL reference gateway for the task itself,
// the terminal's program run as VS Code runs it (shellPath + shellArgs as argv, env laid over the
// host's), and the scripted fake model upstream (a fixture standing in for the model API).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { InteractiveSessionTerminal } from '../../src/agent/runtime/session-terminal';
import { REFERENCE_SESSION_NEEDS_KEY, REFERENCE_SESSION_NEEDS_OWN_MODEL } from '../../src/agent/runtime/session-terminal';
import type { HostEngine } from '../../src/engine/host-engine';
import { makeGitWorkspace, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { startTestEngine, waitFor, type TestEngineOptions } from './test-engine';

const OWN_KEY = 'sk-own-model-key-e2e-0001';

/** What VS Code does with TerminalOptions.env: laid over the base environment, null deletes. */
function terminalEnv(overlay: InteractiveSessionTerminal['env']): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [name, value] of Object.entries(overlay)) {
    if (value === null) delete env[name];
    else env[name] = value;
  }
  return env;
}

describe('Open session on a finished reference-agent task (real engine, gateway and agent)', function () {
  let world: GatewayWorld;
  let engine: HostEngine | undefined;

  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await engine?.dispose();
    engine = undefined;
    await world.close();
  });

  /** A window whose first task completed with the reference agent; `ownModel` as personal mode would give it. */
  async function finishedTask(ownModel?: TestEngineOptions['ownModel']): Promise<string> {
    engine = await startTestEngine({
      storageDir: `${world.root}/globalStorage`,
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
      ownModel,
    });
    world.upstream.enqueue({ kind: 'text', text: 'Looked around; nothing to change.' });
    const created = await engine.service.create({
      title: 'look around',
      prompt: 'look at the workspace',
      permissionMode: 'default',
      workspacePath: makeGitWorkspace(world.root),
    });
    await waitFor(() => engine!.service.getTask(created.id)?.status === 'completed', 'the task to complete', 90_000);
    return created.id;
  }

  it('with the own model key: the session continues in a terminal, one instruction a line, through a route that adds the key (the agent never has it); the route goes with the terminal', async () => {
    const id = await finishedTask({ baseUrl: world.upstream.url, apiKey: async () => OWN_KEY });
    const view = await engine!.sessions.view(id);
    assert.equal(view.kind, 'interactive');
    if (view.kind !== 'interactive') return;
    const { shellPath, shellArgs, cwd, env } = view.terminal;
    const task = engine!.service.getTask(id)!;
    assert.deepEqual(shellArgs.slice(-9, -5), ['--resume', task.sessionId, '--interactive', '--cwd']);
    assert.ok(![...shellArgs, ...Object.values(env)].some((v) => v?.includes(OWN_KEY)), 'the key is in neither argv nor environment');

    const before = world.upstream.messageRequests().length;
    world.upstream.enqueue({ kind: 'text', text: 'Earlier I looked around the workspace.' });
    const child = spawn(shellPath, shellArgs, { cwd, env: terminalEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      await waitFor(() => out.includes('› '), 'the prompt for an instruction', 60_000);
      child.stdin!.write('what did you do?\n');
      await waitFor(() => out.includes('Earlier I looked around the workspace.'), "the model's answer in the terminal", 60_000);
      await waitFor(() => out.split('› ').length > 2, 'the next prompt', 30_000);
      child.stdin!.write('exit\n');
      assert.equal(await exited, 0, out);
    } finally {
      child.kill('SIGKILL');
    }

    const [asked] = world.upstream.messageRequests().slice(before);
    assert.equal(asked.headers['x-api-key'], OWN_KEY, 'the route added the own model key');
    assert.equal(asked.headers['x-offpeak-ticket'], undefined, "no ticket: the user's own conversation");
    const texts = JSON.stringify(asked.body);
    assert.ok(texts.includes('look at the workspace') && texts.includes('what did you do?'), 'the same session, continued');

    // The terminal closed: its route is refused from now on.
    view.close?.();
    const refused = await fetch(`${env.ANTHROPIC_BASE_URL}/v1/messages`, { method: 'POST', body: '{}' });
    assert.equal(refused.status, 404);
  });

  it("item 5: the session's terminal ends when its model route closes (the engine stops, as at a restart), so nobody who binds the freed port gets the conversation", async () => {
    const id = await finishedTask({ baseUrl: world.upstream.url, apiKey: async () => OWN_KEY });
    const view = await engine!.sessions.view(id);
    assert.equal(view.kind, 'interactive');
    if (view.kind !== 'interactive') return;
    const { shellPath, shellArgs, cwd, env } = view.terminal;
    const child = spawn(shellPath, shellArgs, { cwd, env: terminalEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
    // What SessionTerminals does with the terminal (src/vscode/session-commands.ts): ended with its route.
    assert.ok(view.routeClosed, 'the view says when its model route closes');
    let ended = false;
    void view.routeClosed.then(() => {
      ended = true;
      child.kill();
    });
    try {
      await waitFor(() => out.includes('› '), 'the prompt for an instruction', 60_000);
      await engine!.dispose();
      engine = undefined;
      await waitFor(() => ended, 'the terminal ended with its route', 10_000);
      await exited;
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('without the own model API (team mode) or without its key: the transcript, and why', async () => {
    const id = await finishedTask({ baseUrl: world.upstream.url, apiKey: async () => undefined });
    assert.deepEqual(await engine!.sessions.view(id), { kind: 'transcript', why: REFERENCE_SESSION_NEEDS_KEY });
    await engine!.dispose();
    engine = await startTestEngine({
      storageDir: `${world.root}/globalStorage`,
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
    });
    assert.deepEqual(await engine.sessions.view(id), { kind: 'transcript', why: REFERENCE_SESSION_NEEDS_OWN_MODEL });
    assert.match(REFERENCE_SESSION_NEEDS_OWN_MODEL, /off-peak ticket/, 'the UI says a conversation would need a ticket in team mode');
  });
});
