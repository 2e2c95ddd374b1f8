// `npm run test:ui:schedules`: a nightly schedule and a two-step chain, by real clicks inside a
// real VS Code (code-server + headless Chromium), from the create form (docs/flows.md#schedules-and-chains);
// screenshots go to test/artifacts/panel-tour-schedules/:
//   1. the form with Repeat: Daily at 02:00 ("Create schedule"); the Schedules section shows it with
//      "Every day at 02:00" and "Next: … 02:00"; Pause says "Paused", Resume brings "Next: …" back;
//   2. task A, then task B "After" A with "Continue in its branch": B's card says "After A" while A
//      runs; A completes, then B runs in A's branch and completes: one branch holds both steps' files;
//   3. the layout is checked and shot at 1400 and 500 px.
//
// Stand-in for the outside world: a scripted fake Anthropic upstream (test/fixtures/
// fake-anthropic-upstream.ts, a TEST FIXTURE) behind a reference gateway.
//
// usage: node --import tsx scripts/panel-tour-schedules.ts [--no-build] [--keep]
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { FakeAnthropicUpstream, lastMessageHasToolResult, type RecordedRequest } from '../test/fixtures/fake-anthropic-upstream';
import { checkLayout } from './vscode/panel-checks';
import { gitWorkspace, runTour, until } from './vscode/tour';
import { runCommand } from './vscode/workbench';

const STEP_A = 'Step A: write a.txt';
const STEP_B = 'Step B: write b.txt';
/** Step A's first answer waits this long: B is queued "After" A by clicks while A has not completed. */
const STEP_A_HOLD_MS = 30_000;

/** Which step a model request belongs to (its first user message is the task's prompt). */
function stepOf(request: RecordedRequest): 'A' | 'B' | undefined {
  const text = JSON.stringify((request.body as { messages?: unknown[] } | undefined)?.messages?.[0] ?? '');
  return text.includes(STEP_A) ? 'A' : text.includes(STEP_B) ? 'B' : undefined;
}

runTour('panel-tour-schedules', async ({ stateDir, log, gateway, codeServer, openPanel, stopLater }) => {
  const { workspace, git } = gitWorkspace(stateDir, { 'README.md': "# the tour's repository\n" });

  const upstream = await FakeAnthropicUpstream.start();
  stopLater(() => upstream.close());
  upstream.setDefaultReply((request) => {
    const step = stepOf(request);
    if (!step) return { kind: 'text', text: 'Nothing to do.' };
    if (lastMessageHasToolResult(request.body)) return { kind: 'text', text: `Step ${step} done.` };
    const file = step === 'A' ? 'a.txt' : 'b.txt';
    return {
      kind: 'tool_use',
      name: 'write_file',
      input: { path: file, content: `step ${step}\n` },
      ...(step === 'A' ? { delayMs: STEP_A_HOLD_MS } : {}),
    };
  });
  const gw = await gateway(['--log-level', 'warn', '--upstream-url', upstream.url], { OFFPEAK_UPSTREAM_API_KEY: 'upstream-secret' });
  const server = await codeServer({
    userSettings: { 'workbench.colorTheme': 'Default Dark Modern', 'git.enabled': false },
    machineSettings: { 'offPeak.gatewayUrl': gw.url },
  });
  const { page, tour } = await openPanel(server, workspace);
  const form = () => tour.frame.locator('[data-testid="create-form"]');

  // --- 1. A nightly schedule: Repeat Daily at 02:00, then Pause and Resume -------------------
  await tour.typePrompt('Nightly: update the dependencies and fix what breaks');
  await form().locator('[data-testid="title"] input').fill('Nightly deps');
  await tour.choose('repeat', 'Daily');
  await form().locator('[data-testid="repeat-time"] input').fill('02:00');
  assert.equal(await form().locator('[data-testid="not-before"]').count(), 0, '"Not before" belongs to one task');
  assert.equal((await form().locator('[data-testid="submit"]').innerText()).trim(), 'Create schedule');
  await tour.shot('form-repeat-daily');
  await form().locator('[data-testid="submit"]').click();
  const nightly = tour.frame.locator('li.schedule-row', {
    has: tour.frame.locator('[data-testid="schedule-title"]', { hasText: 'Nightly deps' }),
  });
  await nightly.waitFor({ timeout: 30_000 });
  assert.equal(await nightly.locator('[data-testid="schedule-rule"]').innerText(), 'Every day at 02:00');
  const next = await nightly.locator('[data-testid="schedule-next"]').innerText();
  assert.match(next, /^Next: .*02:00$/);
  await tour.shot('schedule-created');
  log(`schedule: "Nightly deps", Every day at 02:00, ${next}`);
  await nightly.locator('[data-testid="schedule-pause"]').click();
  await nightly.locator('[data-testid="schedule-next"]', { hasText: 'Paused' }).waitFor({ timeout: 30_000 });
  await tour.shot('schedule-paused');
  await nightly.locator('[data-testid="schedule-resume"]').click();
  await nightly.locator('[data-testid="schedule-next"]', { hasText: /^Next: .*02:00$/ }).waitFor({ timeout: 30_000 });
  log('schedule: paused ("Paused"), resumed ("Next: … 02:00")');

  // --- 2. A two-step chain: B after A, in A's branch ------------------------------------------
  await tour.create(STEP_A, 'Accept edits');
  await tour.typePrompt(STEP_B);
  await tour.choose('permission-mode', 'Accept edits');
  // The After list opens downwards: brought to the middle of the panel first, its options are not under the status bar.
  await form()
    .locator('[data-testid="after-task"]')
    .evaluate((el) => el.scrollIntoView({ block: 'center' }));
  // A snapshot arriving while the list is open (A's state changes as it starts) can swallow the
  // pick: picked again until the form shows "Continue in its branch" (shown once a task is chosen).
  await until(
    '"After" set to Step A',
    async () => {
      if ((await form().locator('[data-testid="continue-in-branch"]').count()) > 0) return true;
      await tour.choose('after-task', STEP_A).catch(() => undefined);
      return false;
    },
    90_000,
  );
  const inBranch = form().locator('[data-testid="continue-in-branch"] input');
  assert.ok(await inBranch.isChecked(), '"Continue in its branch" starts checked');
  await tour.shot('form-after-step-a');
  await tour.submit();
  await tour.card(STEP_B).waitFor({ timeout: 30_000 });
  await tour.phaseOf(STEP_B, `After ${STEP_A}`);
  assert.ok(!upstream.requests.some((r) => stepOf(r) === 'B'), 'B has not started');
  await tour.shot('step-b-after-step-a');
  log('chain: B says "After Step A" while A runs');
  await tour.phaseOf(STEP_A, 'Completed', 240_000);
  await tour.phaseOf(STEP_B, 'Completed', 240_000);
  const seqs = (step: 'A' | 'B') => upstream.requests.filter((r) => stepOf(r) === step).map((r) => r.seq);
  assert.ok(
    Math.max(...seqs('A')) < Math.min(...seqs('B')),
    `A's model requests (${seqs('A').join(', ')}) all come before B's (${seqs('B').join(', ')})`,
  );
  // One worktree, on one offpeak/ branch, holds both steps' files (B continued in A's branch).
  const worktreesNow = () =>
    git('worktree', 'list', '--porcelain')
      .split('\n')
      .filter((l) => l.startsWith('worktree '))
      .map((l) => l.slice('worktree '.length))
      .filter((p) => path.resolve(p) !== path.resolve(workspace));
  const both = await until('a worktree with a.txt and b.txt', () =>
    worktreesNow().find((p) => existsSync(path.join(p, 'a.txt')) && existsSync(path.join(p, 'b.txt'))),
  );
  const worktrees = worktreesNow();
  assert.equal(worktrees.length, 1, `one worktree for the chain: ${worktrees.join(', ')}`);
  assert.ok(!existsSync(path.join(workspace, 'a.txt')), "the steps ran in their branch's worktree, not in the user's folder");
  await tour.shot('chain-completed');
  log(`chain: A completed, then B, both in ${path.basename(both)}`);

  // --- 3. The layout at 1400 and 500 px ------------------------------------------------------
  // The tasks' notifications may cover the panel: gone for the layout shots.
  await runCommand(page, 'Notifications: Clear All Notifications');
  await checkLayout(
    page,
    () => tour.panel(),
    (name) => tour.shot(name),
    'schedules',
    log,
  );
});
