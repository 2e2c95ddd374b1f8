// Checks and fix rounds (docs/flows.md#checks), end to end: the real HostEngine, real
// reference-agent processes, real check commands through the platform shell, and the REAL
// reference gateway (loopback) in front of the scripted fake model upstream (a fixture standing
// in for the model API).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { HostEngine } from '../../src/engine/host-engine';
import type { GatewayConfig } from '../../src/gateway/config';
import { makeGitWorkspace, processAlive, startWorld, USER_KEY, type GatewayWorld } from './gateway-fixture';
import { startTestEngine, waitFor } from './test-engine';

/** The repository's own test: passes once fixed.txt exists, else says so and exits 3. */
const CHECK_JS = `const fs = require('node:fs');
fs.appendFileSync('check-runs.txt', 'run\\n');
if (fs.existsSync('fixed.txt')) { console.log('all 3 tests pass'); process.exit(0); }
console.log('\\u001b[31mFAIL\\u001b[0m test/fixed.test: fixed.txt is missing (expected it to exist)');
process.exit(3);
`;

/** The text of every user message of a request body (the fed-back check output is one). */
function userTexts(body: unknown): string[] {
  const messages = (body as { messages?: { role: string; content: string | { type: string; text?: string }[] }[] }).messages ?? [];
  return messages
    .filter((m) => m.role === 'user')
    .flatMap((m) => (typeof m.content === 'string' ? [m.content] : m.content.filter((c) => c.type === 'text').map((c) => c.text ?? '')));
}

function commitFile(ws: string, name: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(ws, name)), { recursive: true });
  fs.writeFileSync(path.join(ws, name), text);
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.email=e2e@example.invalid', '-c', 'user.name=e2e', ...args], { cwd: ws, stdio: 'ignore' });
  git('add', name);
  git('commit', '-q', '-m', `add ${name}`);
}

describe('checks and fix rounds (reference agent, real gateway, real check commands)', function () {
  this.timeout(150_000);
  let world: GatewayWorld;
  let engine: HostEngine | undefined;

  const start = async (config: Partial<GatewayConfig> = {}, maxRounds = 2) => {
    world = await startWorld(config);
    engine = await startTestEngine({
      storageDir: path.join(world.root, 'globalStorage'),
      gatewayUrl: world.gateway.url,
      apiKey: USER_KEY,
      agent: 'reference',
      checks: { timeoutMs: () => 60_000, maxRounds: () => maxRounds },
    });
    await engine.service.availability.refresh();
    return engine;
  };
  const finished = (taskId: string) =>
    waitFor(
      () => {
        const t = engine!.service.getTask(taskId);
        return t && ['completed', 'failed', 'cancelled'].includes(t.status) ? t : undefined;
      },
      'the task to finish',
      120_000,
    );
  const checkOf = (taskId: string) => engine!.store.read((tx) => tx.checks.get(taskId));

  afterEach(async () => {
    await engine?.dispose();
    engine = undefined;
    await world.close();
  });

  it('a check that fails once passes after the fix round: the same session is resumed with the command, exit code and output; ready after two rounds, one History row', async () => {
    await start();
    const ws = makeGitWorkspace(world.root);
    commitFile(ws, 'check.js', CHECK_JS);
    world.upstream.enqueue(
      { kind: 'text', text: 'Done, I think.' },
      { kind: 'tool_use', name: 'write_file', input: { path: 'fixed.txt', content: 'fixed\n' } },
      { kind: 'text', text: 'Fixed: fixed.txt now exists.' },
    );
    const task = await engine!.service.create({
      title: 'fix me',
      prompt: 'make the tests pass',
      permissionMode: 'acceptEdits',
      workspacePath: ws,
      checkCommand: 'node check.js',
    });
    const done = await finished(task.id);

    assert.equal(done.status, 'completed', done.failureReason ?? '');
    const check = checkOf(task.id)!;
    assert.deepEqual([check.state, check.round, check.exitCode], ['passed', 2, 0], 'passed in round 2');
    assert.match(check.output ?? '', /all 3 tests pass/);
    assert.equal(fs.readFileSync(path.join(ws, 'check-runs.txt'), 'utf8'), 'run\nrun\n', 'the check ran twice');

    const requests = world.upstream.messageRequests();
    assert.equal(requests.length, 3, 'first turn, then the fix round (a tool call and its answer)');
    const fed = userTexts(requests[1].body).at(-1) ?? '';
    assert.match(fed, /Command: node check\.js/);
    assert.match(fed, /exited with code 3/);
    assert.match(fed, /FAIL test\/fixed\.test: fixed\.txt is missing/, 'the output tail, its colour codes stripped');
    assert.ok(!fed.includes('\u001b'), 'no control sequence reaches the model');
    assert.deepEqual(userTexts(requests[1].body)[0], 'make the tests pass', 'the same session: its first prompt is still there');

    assert.equal(engine!.service.ticketsOf(task.id).length, 1, 'one ticket: the fix round ran in the same segment');
    const history = engine!.service.history();
    assert.equal(history.length, 1);
    assert.equal(history[0].status, 'succeeded');
  });

  it('a check that never passes ends the task "check failed" after maxRounds, with the last output kept', async () => {
    await start();
    const ws = makeGitWorkspace(world.root);
    commitFile(ws, 'check.js', CHECK_JS);
    world.upstream.enqueue({ kind: 'text', text: 'Done.' }, { kind: 'text', text: 'I could not fix it.' });
    const task = await engine!.service.create({
      title: 'never',
      prompt: 'make the tests pass',
      permissionMode: 'plan',
      workspacePath: ws,
      checkCommand: 'node check.js',
    });
    const done = await finished(task.id);

    assert.equal(done.status, 'completed', 'the agent finished; its check did not pass');
    const check = checkOf(task.id)!;
    assert.deepEqual([check.state, check.round, check.exitCode], ['failed', 2, 3]);
    assert.match(check.output ?? '', /fixed\.txt is missing/, 'the last output is kept');
    assert.equal(fs.readFileSync(path.join(ws, 'check-runs.txt'), 'utf8'), 'run\nrun\n', 'two rounds, no third');
    assert.equal(world.upstream.messageRequests().length, 2, 'one fix round');
  });

  it("a segment that ends in the middle of a check re-runs the check after the retake: one History row, the check's two runs", async () => {
    await start({ activeWindowMs: 3_000 });
    const ws = makeGitWorkspace(world.root);
    // Slow enough that the ticket's 3 s active window ends while it runs.
    commitFile(
      ws,
      'slow-check.js',
      `require('node:fs').appendFileSync('check-runs.txt', 'run\\n'); setTimeout(() => process.exit(0), 6000);\n`,
    );
    world.upstream.enqueue({ kind: 'text', text: 'Done.' });
    const task = await engine!.service.create({
      title: 'straddle',
      prompt: 'finish',
      permissionMode: 'plan',
      workspacePath: ws,
      checkCommand: 'node slow-check.js',
    });
    const done = await finished(task.id);

    assert.equal(done.status, 'completed', done.failureReason ?? '');
    const check = checkOf(task.id)!;
    assert.deepEqual([check.state, check.round], ['passed', 1], 'the re-run is the same round');
    assert.equal(fs.readFileSync(path.join(ws, 'check-runs.txt'), 'utf8'), 'run\nrun\n', 'cut once, run again after the retake');
    const tickets = engine!.service.ticketsOf(task.id);
    assert.deepEqual(
      tickets.map((t) => t.endReason),
      ['expired', 'completed'],
      'the first segment ended, the second finished the check',
    );
    assert.equal(world.upstream.messageRequests().length, 1, 'the agent was not resumed for a cut check');
    assert.equal(engine!.service.history().length, 1);
  });

  it('cancel during a check stops the check command and what it started', async () => {
    await start();
    const ws = makeGitWorkspace(world.root);
    commitFile(
      ws,
      'hang-check.js',
      `const fs = require('node:fs'); fs.writeFileSync('check.pid', String(process.pid)); setTimeout(() => fs.writeFileSync('check-ended.txt', 'ended'), 8000);\n`,
    );
    world.upstream.enqueue({ kind: 'text', text: 'Done.' });
    const task = await engine!.service.create({
      title: 'cancel',
      prompt: 'finish',
      permissionMode: 'plan',
      workspacePath: ws,
      checkCommand: 'node hang-check.js',
    });
    const pidFile = path.join(ws, 'check.pid');
    const pid = await waitFor(() => fs.existsSync(pidFile) && Number(fs.readFileSync(pidFile, 'utf8')), 'the check to run', 60_000);
    assert.equal(checkOf(task.id)!.state, 'checking');

    await engine!.service.cancel(task.id);
    const done = await finished(task.id);
    assert.equal(done.status, 'cancelled');
    await waitFor(() => !processAlive(pid), 'the check process to be gone', 10_000);
    await new Promise((resolve) => setTimeout(resolve, 9_000));
    assert.equal(fs.existsSync(path.join(ws, 'check-ended.txt')), false, 'the check did not run on');
  });

  it("a repository's settings cannot set the check command: a task without one runs no check, and the folder's settings offer none", async () => {
    await start();
    const ws = makeGitWorkspace(world.root);
    commitFile(ws, 'pwn.js', `require('node:fs').writeFileSync('pwned.txt', 'ran');\n`);
    commitFile(
      ws,
      '.vscode/settings.json',
      JSON.stringify({ 'offPeak.check.command': 'node pwn.js', 'offPeak.checkCommand': 'node pwn.js', 'offPeak.check.maxRounds': 9 }),
    );
    world.upstream.enqueue({ kind: 'text', text: 'Done.' });
    const task = await engine!.service.create({ title: 'plain', prompt: 'finish', permissionMode: 'plan', workspacePath: ws });
    const done = await finished(task.id);

    assert.equal(done.status, 'completed', done.failureReason ?? '');
    assert.equal(checkOf(task.id), undefined, 'no check');
    assert.equal(fs.existsSync(path.join(ws, 'pwned.txt')), false, 'nothing from the repository ran');
    assert.equal(
      engine!.store.read((tx) => tx.checks.lastCommandFor(done.workspaceKey)),
      null,
      'the form is offered nothing for this folder',
    );
    // The extension reads no check command from any setting, and its check settings are the machine's only.
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8')) as {
      contributes: { configuration: { properties: Record<string, { scope?: string }> } };
    };
    const settings = Object.entries(manifest.contributes.configuration.properties);
    assert.deepEqual(
      settings.filter(([key]) => key.startsWith('offPeak.check')).map(([key, value]) => [key, value.scope]),
      [
        ['offPeak.check.timeoutMinutes', 'machine'],
        ['offPeak.check.maxRounds', 'machine'],
        ['offPeak.check.whenAgentChangedIt', 'machine'],
      ],
    );
    // (offPeak.notify.include.checkCommand only says whether a notification may quote it.)
    assert.deepEqual(
      settings.filter(([key]) => /command/i.test(key) && !key.startsWith('offPeak.notify.include.')),
      [],
      'no setting names a command to run',
    );
  });
});
