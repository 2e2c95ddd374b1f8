// `npm run test:ui:checks`: a task with a check command, by real clicks inside a real VS Code
// (code-server + headless Chromium), from the create form to "Ready for review" and the check's
// output (docs/flows.md#checks); screenshots go to test/artifacts/panel-tour-checks/:
//   1. the form with the Check command typed (`node check.js`, the repository's own test, which
//      fails until fixed.txt exists);
//   2. the agent ends its first turn without fixing anything: the check fails, the same session is
//      resumed with its output, the agent writes fixed.txt, and the check passes in round 2;
//   3. the card says "Ready for review · checks pass (node check.js, round 2)"; Output shows the
//      passing run's output; the layout is checked and shot at 1400 and 500 px.
//
// Stand-in for the outside world: a scripted fake Anthropic upstream (test/fixtures/
// fake-anthropic-upstream.ts, a TEST FIXTURE) behind a reference gateway.
//
// usage: node --import tsx scripts/panel-tour-checks.ts [--no-build] [--keep]
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { FakeAnthropicUpstream, type RecordedRequest } from '../test/fixtures/fake-anthropic-upstream';
import { checkLayout } from './vscode/panel-checks';
import { gitWorkspace, runTour, until } from './vscode/tour';
import { runCommand } from './vscode/workbench';

/** The repository's own test: passes once fixed.txt exists. */
const CHECK_JS = `const fs = require('node:fs');
if (fs.existsSync('fixed.txt')) { console.log('all 3 tests pass'); process.exit(0); }
console.log('FAIL test/fixed.test: fixed.txt is missing');
process.exit(3);
`;

type Body = { messages?: { role: string; content: string | { type: string; text?: string }[] }[] };

/** Whether the check's failure was fed back to the session, and how many tool calls the model made since. */
function turn(request: RecordedRequest): { fedBack: boolean; callsSince: number } {
  const messages = (request.body as Body).messages ?? [];
  const texts = (m: (typeof messages)[number]) =>
    typeof m.content === 'string' ? [m.content] : m.content.filter((c) => c.type === 'text').map((c) => c.text ?? '');
  const at = messages.findIndex((m) => m.role === 'user' && texts(m).some((t) => t.includes('fixed.txt is missing')));
  if (at < 0) return { fedBack: false, callsSince: 0 };
  const callsSince = messages
    .slice(at)
    .filter((m) => m.role === 'assistant' && Array.isArray(m.content) && m.content.some((c) => c.type === 'tool_use')).length;
  return { fedBack: true, callsSince };
}

runTour('panel-tour-checks', async ({ stateDir, log, gateway, codeServer, openPanel, stopLater }) => {
  const { workspace } = gitWorkspace(stateDir, { 'check.js': CHECK_JS });

  const upstream = await FakeAnthropicUpstream.start();
  stopLater(() => upstream.close());
  upstream.setDefaultReply((request) => {
    const { fedBack, callsSince } = turn(request);
    if (!fedBack) return { kind: 'text', text: 'Done, I think.' };
    if (callsSince === 0) return { kind: 'tool_use', name: 'write_file', input: { path: 'fixed.txt', content: 'fixed\n' } };
    return { kind: 'text', text: 'Fixed: fixed.txt now exists.' };
  });
  const gw = await gateway(['--log-level', 'warn', '--upstream-url', upstream.url], { OFFPEAK_UPSTREAM_API_KEY: 'upstream-secret' });
  const server = await codeServer({
    userSettings: { 'workbench.colorTheme': 'Default Dark Modern', 'git.enabled': false },
    machineSettings: { 'offPeak.gatewayUrl': gw.url },
  });
  const { page, tour } = await openPanel(server, workspace);

  // --- 1. The form, with the check command typed --------------------------------------------
  const prompt = 'Checks tour: make the tests pass';
  await tour.typePrompt(prompt);
  await tour.choose('permission-mode', 'Accept edits');
  const checkField = tour.frame.locator('[data-testid="create-form"] [data-testid="check-command"]');
  await checkField.locator('input').fill('node check.js');
  await tour.shot('form-with-check-command');
  await tour.submit();
  await tour.card(prompt).waitFor({ timeout: 30_000 });
  log('form: queued with the check command "node check.js"');

  // --- 2. Round 1 fails, the session is resumed with its output, round 2 passes -------------
  const line = tour.card(prompt).locator('[data-testid="check-line"]');
  await tour.card(prompt).locator('[data-testid="check-line"][data-state="passed"]').waitFor({ timeout: 240_000 });
  assert.equal(
    (await line.locator('[data-testid="check-text"]').innerText()).trim(),
    'Ready for review · checks pass (node check.js, round 2)',
  );
  const fed = await until('the fed-back check output in a model request', () => upstream.requests.find((r) => turn(r).fedBack));
  assert.ok(fed, 'the resumed session got the failing output');
  assert.ok(!existsSync(path.join(workspace, 'fixed.txt')), "the fix is in the task's worktree, not in the user's folder");
  await tour.shot('ready-for-review');
  log('rounds: round 1 failed (exit code 3), the session got its output, round 2 passed');

  // --- 3. The layout at 1400 and 500 px; the output one click away --------------------------
  // The task's notification may cover the panel: gone for the layout shots.
  await runCommand(page, 'Notifications: Clear All Notifications');
  await checkLayout(
    page,
    () => tour.panel(),
    (name) => tour.shot(name),
    'checks',
    log,
  );
  await line.locator('[data-testid="check-output-toggle"]').click();
  const output = line.locator('[data-testid="check-output"]');
  await output.waitFor({ timeout: 10_000 });
  assert.match(await output.innerText(), /all 3 tests pass/);
  await tour.shot('check-output');
  log("layout at 1400 and 500 px; output: the passing run's output under the card");
});
