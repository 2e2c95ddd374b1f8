// `npm run test:ui:chains`: a chain brought home as one, and a check that never passes, by real
// clicks inside a real VS Code (code-server + headless Chromium); screenshots go to
// test/artifacts/panel-tour-chains/ (docs/flows.md#bring-it-home, docs/flows.md#checks):
//   1. "Step A" with a check (`node check.js`, which fails until fixed.txt exists) and "Step B" after
//      it, continuing in its branch; A's check fails in round 1 and passes in round 2, then B runs;
//   2. a task whose check (`node never.js`) never passes: its card says the check failed; Discard;
//   3. the chain: A's card offers no Merge and names B; Merge on B's card names both steps, makes one
//      commit naming both, and both cards say Merged; Remove worktree then keeps Merged on both;
//   4. the layout is checked and shot at 1400 and 500 px.
//
// Stand-in for the outside world: a scripted fake Anthropic upstream (test/fixtures/
// fake-anthropic-upstream.ts, a TEST FIXTURE) behind a reference gateway.
//
// usage: node --import tsx scripts/panel-tour-chains.ts [--no-build] [--keep]
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { FakeAnthropicUpstream, type RecordedRequest } from '../test/fixtures/fake-anthropic-upstream';
import { checkLayout } from './vscode/panel-checks';
import { gitWorkspace, runTour, until } from './vscode/tour';
import { answerDialog, runCommand } from './vscode/workbench';

/** The repository's own test: passes once fixed.txt exists. */
const CHECK_JS = `const fs = require('node:fs');
if (fs.existsSync('fixed.txt')) { console.log('all 3 tests pass'); process.exit(0); }
console.log('FAIL test/fixed.test: fixed.txt is missing');
process.exit(3);
`;
/** A test that never passes, whatever the agent does. */
const NEVER_JS = `console.log('FAIL test/never.test: this never passes'); process.exit(1);\n`;

const A = 'Chains tour: step A';
const B = 'Chains tour: step B';
const NEVER = 'Chains tour: a check that never passes';

type Body = { messages?: { role: string; content: string | { type: string; text?: string }[] }[] };

/** The task's prompt, its tool calls so far, and whether a failed check was fed back (and the calls since). */
function turn(request: RecordedRequest): { prompt: string; calls: number; fedBack: boolean; callsSince: number } {
  const messages = (request.body as Body).messages ?? [];
  const texts = (m: (typeof messages)[number]) =>
    typeof m.content === 'string' ? [m.content] : m.content.filter((c) => c.type === 'text').map((c) => c.text ?? '');
  const isCall = (m: (typeof messages)[number]) =>
    m.role === 'assistant' && Array.isArray(m.content) && m.content.some((c) => c.type === 'tool_use');
  const at = messages.findIndex((m, i) => i > 0 && m.role === 'user' && texts(m).some((t) => t.includes('FAIL test/')));
  return {
    prompt: messages[0] ? texts(messages[0]).join('') : '',
    calls: messages.filter(isCall).length,
    fedBack: at >= 0,
    callsSince: at >= 0 ? messages.slice(at).filter(isCall).length : 0,
  };
}

runTour('panel-tour-chains', async ({ stateDir, log, gateway, codeServer, openPanel, stopLater }) => {
  const { workspace, git } = gitWorkspace(stateDir, { 'check.js': CHECK_JS, 'never.js': NEVER_JS });

  const upstream = await FakeAnthropicUpstream.start();
  stopLater(() => upstream.close());
  upstream.setDefaultReply((request) => {
    const { prompt, calls, fedBack, callsSince } = turn(request);
    const write = (file: string) => ({ kind: 'tool_use' as const, name: 'write_file', input: { path: file, content: `${file}\n` } });
    if (fedBack) return callsSince === 0 && prompt.startsWith(A) ? write('fixed.txt') : { kind: 'text', text: 'Tried again.' };
    if (calls > 0) return { kind: 'text', text: 'Done.' };
    if (prompt.startsWith(A)) return write('a.txt');
    if (prompt.startsWith(B)) return write('b.txt');
    return write('never.txt');
  });
  const gw = await gateway(['--log-level', 'warn', '--upstream-url', upstream.url], { OFFPEAK_UPSTREAM_API_KEY: 'upstream-secret' });
  const server = await codeServer({
    userSettings: { 'workbench.colorTheme': 'Default Dark Modern', 'git.enabled': false },
    machineSettings: { 'offPeak.gatewayUrl': gw.url },
  });
  const { page, tour } = await openPanel(server, workspace);
  const checkField = () => tour.frame.locator('[data-testid="create-form"] [data-testid="check-command"] input');

  // --- 1. Step A with a check, Step B after it in its branch ---------------------------------
  await tour.typePrompt(A);
  await tour.choose('permission-mode', 'Accept edits');
  await checkField().fill('node check.js');
  await tour.submit();
  await tour.card(A).waitFor({ timeout: 30_000 });
  await tour.typePrompt(B);
  await tour.choose('permission-mode', 'Accept edits');
  await checkField().fill('');
  // The After list opens below the select, under the status bar in a short panel: picked by keyboard
  // (A is its only task, after "No other task").
  await tour.frame.locator('[data-testid="create-form"] [data-testid="after-task"]').click();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await tour.frame.locator('[data-testid="create-form"] [data-testid="continue-in-branch"]').waitFor({ timeout: 10_000 });
  const inBranch = tour.frame.locator('[data-testid="create-form"] [data-testid="continue-in-branch"] input');
  if (!(await inBranch.isChecked())) await inBranch.click();
  await tour.shot('form-step-b-after-a');
  await tour.submit();
  await tour.card(B).waitFor({ timeout: 30_000 });
  await tour.phaseOf(B, `After ${A}`);
  await tour.card(A).locator('[data-testid="check-line"][data-state="passed"]').waitFor({ timeout: 240_000 });
  assert.match(await tour.card(A).locator('[data-testid="check-text"]').innerText(), /round 2/);
  await tour.phaseOf(B, 'Completed', 240_000);
  log('chain: A failed its check in round 1, passed in round 2; B continued in its branch');

  // --- 2. A check that never passes, then Discard ---------------------------------------------
  await tour.typePrompt(NEVER);
  await tour.choose('permission-mode', 'Accept edits');
  await checkField().fill('node never.js');
  await tour.submit();
  await tour.card(NEVER).locator('[data-testid="check-line"][data-state="failed"]').waitFor({ timeout: 300_000 });
  const failedText = (await tour.card(NEVER).locator('[data-testid="check-text"]').innerText()).trim();
  assert.match(failedText, /fail/i, 'the card says the check failed');
  await runCommand(page, 'Notifications: Clear All Notifications');
  await tour.shot('check-never-passes');
  log(`never-passing check: the card says "${failedText}"`);
  await tour.click(NEVER, 'discard-changes');
  await answerDialog(page, 'Discard Changes');
  await tour.card(NEVER).locator('[data-testid="discarded"]').waitFor({ timeout: 30_000 });
  assert.ok(!existsSync(path.join(workspace, 'never.txt')));
  log('never-passing check: discarded');

  // --- 3. The chain comes home as one ---------------------------------------------------------
  assert.equal(await tour.card(A).locator('[data-testid="merge-changes"]').count(), 0, "A's card offers no Merge of its own");
  await tour.card(A).locator('[data-testid="bring-home-with"]', { hasText: B }).waitFor({ timeout: 10_000 });
  await tour.shot('chain-before-merge');
  const branch = git('branch', '--list', 'offpeak/chains-tour-step-a*').replace(/^[*+ ]+/, '');
  await tour.click(B, 'merge-changes');
  const asked = await answerDialog(page, 'Merge');
  for (const text of [A, B, 'a.txt', 'b.txt']) assert.ok(asked.includes(text), `the question names ${text}: ${asked}`);
  for (const step of [A, B]) await tour.card(step).locator('[data-testid="merged"]').waitFor({ timeout: 30_000 });
  const message = git('log', '-1', '--format=%B', branch);
  for (const text of [A, B, 'a.txt', 'b.txt']) assert.ok(message.includes(text), `the commit names ${text}`);
  for (const file of ['a.txt', 'b.txt', 'fixed.txt']) assert.ok(existsSync(path.join(workspace, file)), `${file} is merged`);
  await tour.shot('chain-merged');
  log(`chain: merged once from B's card; ${branch}'s commit names both steps; both cards say Merged`);

  await tour.card(B).locator('[data-testid="discard-changes"]', { hasText: 'Remove' }).click();
  assert.match(await answerDialog(page, 'Remove Worktree and Branch'), /already merged/);
  await tour.card(B).locator('[data-testid="worktree-removed"]').waitFor({ timeout: 30_000 });
  for (const step of [A, B]) assert.equal(await tour.card(step).locator('[data-testid="merged"]').count(), 1, `${step} still says Merged`);
  assert.equal(await tour.card(B).locator('[data-testid="discarded"]').count(), 0);
  await until('the branch gone', () => (git('branch', '--list', branch) === '' ? true : undefined));
  log('chain: Remove worktree after the merge; both cards keep Merged');

  // --- 4. The layout at 1400 and 500 px -------------------------------------------------------
  await runCommand(page, 'Notifications: Clear All Notifications');
  await checkLayout(
    page,
    () => tour.panel(),
    (name) => tour.shot(name),
    'chains',
    log,
  );
});
