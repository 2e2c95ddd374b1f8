// Checks say what they run (docs/flows.md#checks): in a permission mode that asks before commands,
// a check whose files the agent changed since the task's base commit is flagged on the card before
// it runs, and with offPeak.check.whenAgentChangedIt = ask it waits for an answer, a question like
// the agent's own (it parks when nobody answers). Real git repository, real sql.js store, real
// ask broker, real check command through the platform shell; the agent's edit is made by the test.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AskBroker, type AskEvent } from '../../src/agent/questions/asks';
import { guardCheck } from '../../src/agent/runtime/check-guards';
import { checkFilesOf } from '../../src/agent/runtime/check-files';
import { SegmentWork, segmentCheckOf } from '../../src/agent/runtime/segment-work';
import { ManualClock, systemClock } from '../../src/core/clock';
import { ManualTimers } from '../../src/core/timers';
import type { PermissionMode } from '../../src/core/types';
import { checkViewOf } from '../../src/panel/task-card';
import { TaskStore } from '../../src/store';
import { checkFlagText, checkText } from '../../webview/check-line';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' }).trim();

describe('checks say what they run (issue 38)', function () {
  this.timeout(60_000);
  let root: string;
  let repo: string;
  let store: TaskStore;
  let askClock: ManualClock;
  let askTimers: ManualTimers;
  let broker: AskBroker;
  let events: AskEvent[];

  beforeEach(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'offpeak-check-flag-'));
    repo = path.join(root, 'repo');
    fs.mkdirSync(repo);
    fs.writeFileSync(path.join(repo, 'package.json'), JSON.stringify({ scripts: { test: 'node test.js' } }));
    // The check leaves a mark when it runs: the test sees whether it ran, and when.
    fs.writeFileSync(path.join(repo, 'test.js'), "require('node:fs').writeFileSync('ran.txt', 'yes'); console.log('1 passing');\n");
    fs.writeFileSync(path.join(repo, '.gitignore'), 'ran.txt\n');
    git(repo, 'init', '-q');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'init');
    const base = git(repo, 'rev-parse', 'HEAD');
    store = await TaskStore.open({ directory: path.join(root, 'db'), clock: systemClock, durable: false, watch: false });
    await store.mutate((tx) => {
      tx.tasks.insert({
        id: 'T',
        title: 't',
        prompt: 'p',
        permissionMode: 'acceptEdits',
        workspacePath: repo,
        serverTicketId: 'K',
        schedulable: true,
      });
      tx.runtime.recordFirstStart({ taskId: 'T', agent: 'reference', baseCommit: base });
      tx.checks.insert('T', 'npm test', 'key');
      tx.checks.record('T', { state: 'checking', round: 1 });
    });
    askClock = new ManualClock(1_000_000);
    askTimers = new ManualTimers(askClock);
    events = [];
    broker = new AskBroker({
      clock: askClock,
      timers: askTimers,
      timeoutMs: () => 60_000,
      unanswered: () => 'park',
      parkAfterMs: () => 30_000,
      storedDecision: () => undefined,
    });
    broker.onEvent((e) => events.push(e));
  });

  afterEach(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** A segment that starts with the check (as after the agent's turn), guarded as the runtime guards it. */
  function segment(mode: PermissionMode, when: 'run' | 'ask') {
    const { check } = segmentCheckOf(store, 'T', 'K', repo, systemClock, { timeoutMs: () => 30_000, maxRounds: () => 1 });
    assert.ok(check);
    check.segmentOver = () => false; // the ticket's time is not what this test is about
    guardCheck(check, { store, taskId: 'T', permissionMode: mode, folder: repo, asks: broker, whenAgentChangedIt: () => when });
    const shown: string[] = [];
    const work = new SegmentWork({
      first: null,
      check,
      resume: () => Promise.reject(new Error('no fix round here')),
      segmentDir: path.join(root, 'seg'),
      sessionId: 's',
      taskId: 'T',
    });
    work.attach({ write: (t) => shown.push(t) });
    return { work, shown };
  }
  const agentEditsTheTest = () =>
    fs.writeFileSync(path.join(repo, 'test.js'), "require('node:fs').writeFileSync('ran.txt', 'yes'); console.log('all good');\n");
  const ran = () => fs.existsSync(path.join(repo, 'ran.txt'));
  const card = () => checkViewOf(store.read((tx) => tx.checks.get('T'))!);

  it("item 4: the check's files are the words that name files plus package.json and its script's files, the Makefile for make", () => {
    fs.writeFileSync(path.join(repo, 'Makefile'), 'check:\n\tnode test.js\n');
    fs.mkdirSync(path.join(repo, 'scripts'));
    fs.writeFileSync(path.join(repo, 'scripts', 'ci.sh'), 'node test.js\n');
    assert.deepEqual(checkFilesOf('npm test', repo), ['package.json', 'test.js']);
    assert.deepEqual(checkFilesOf('make check', repo), ['Makefile']);
    assert.deepEqual(checkFilesOf('sh ./scripts/ci.sh --fast && echo "done" | cat', repo), ['scripts/ci.sh']);
    assert.deepEqual(checkFilesOf('node /etc/hostname ../outside.js', repo), [], 'nothing outside the folder');
  });

  it('item 4: in Accept edits, a check whose test file the agent changed is flagged on the card before it runs', async () => {
    agentEditsTheTest();
    const { work, shown } = segment('acceptEdits', 'run');
    let flaggedBeforeRun: boolean | undefined;
    const flagged = new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (card().agentChanged) {
          flaggedBeforeRun = !ran();
          clearInterval(poll);
          resolve();
        }
      }, 1);
    });
    const outcome = await work.done;
    await flagged;
    assert.deepEqual(outcome, { kind: 'completed', summary: '', exitCode: 0, check: { passed: true, round: 1 } });
    assert.deepEqual(card().agentChanged, ['test.js']);
    assert.equal(flaggedBeforeRun, true, 'the card had the flag before the check ran');
    assert.equal(checkFlagText(card()), 'The agent changed what this check runs (test.js); it runs outside the permission mode');
    assert.match(shown.join(''), /the agent changed files this check runs \(test\.js\)/);
  });

  it('item 4: with "ask", the check waits for the answer as a question that parks; answered Allow it runs, Deny skips it', async () => {
    agentEditsTheTest();
    const first = segment('default', 'ask');
    while (broker.pending('T').length === 0) await new Promise((r) => setTimeout(r, 5));
    const [question] = broker.pending('T');
    assert.equal(question.tool, 'Run check');
    assert.match(question.input, /command: npm test\nchanged by the agent: test\.js/);
    assert.equal(ran(), false, 'the check waits for the answer');
    // Nobody answers: it parks like the agent's own questions.
    await askTimers.advanceTo(askClock.now() + 30_000);
    assert.ok(events.some((e) => e.type === 'parking'));
    await first.work.park(question.id);
    assert.deepEqual(await first.work.done, { kind: 'parked', askId: question.id });
    assert.equal(ran(), false);

    // Answered Yes (the next segment): the check runs.
    const second = segment('default', 'ask');
    while (broker.pending('T').length === 0) await new Promise((r) => setTimeout(r, 5));
    const again = broker.pending('T')[0];
    assert.equal(broker.answer('T', again.id, 'allow', again.inputDigest), 'accepted');
    assert.equal((await second.work.done).kind, 'completed');
    assert.equal(ran(), true);
    assert.equal(card().state, 'passed');

    // Answered No: skipped, with a clear outcome text.
    fs.rmSync(path.join(repo, 'ran.txt'));
    await store.mutate((tx) => tx.checks.record('T', { state: 'checking', round: 1 }));
    const third = segment('default', 'ask');
    while (broker.pending('T').length === 0) await new Promise((r) => setTimeout(r, 5));
    const no = broker.pending('T')[0];
    broker.answer('T', no.id, 'deny', no.inputDigest);
    assert.deepEqual(await third.work.done, { kind: 'completed', summary: '', exitCode: 0 });
    assert.equal(ran(), false);
    assert.equal(card().state, 'skipped');
    assert.equal(card().output, 'Check skipped: the agent changed test.js, and the answer was No.');
    assert.equal(checkText(card()), 'Check skipped: the agent changed what it runs and it was not allowed to run (npm test)');
  });

  it('item 4: with "run" (the default) it runs as before; unchanged files or Bypass permissions flag nothing and ask nothing', async () => {
    const unchanged = segment('acceptEdits', 'ask');
    assert.equal((await unchanged.work.done).kind, 'completed');
    assert.equal(ran(), true, 'nothing the agent changed: it runs without a question');
    assert.equal(card().agentChanged, undefined);

    agentEditsTheTest();
    fs.rmSync(path.join(repo, 'ran.txt'));
    await store.mutate((tx) => tx.checks.record('T', { state: 'checking', round: 1 }));
    const bypass = segment('bypassPermissions', 'ask');
    assert.equal((await bypass.work.done).kind, 'completed');
    assert.equal(ran(), true);
    assert.equal(card().agentChanged, undefined, 'a mode that asks nothing: the check is no different from what the agent runs');

    fs.rmSync(path.join(repo, 'ran.txt'));
    await store.mutate((tx) => tx.checks.record('T', { state: 'checking', round: 1 }));
    const run = segment('acceptEdits', 'run');
    assert.equal((await run.work.done).kind, 'completed');
    assert.equal(ran(), true);
    assert.deepEqual(broker.pending('T'), []);
    assert.ok(!events.some((e) => e.type === 'asked'), 'no question');
  });
});
