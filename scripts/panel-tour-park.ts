// `node --import tsx scripts/panel-tour-park.ts [--no-build] [--keep]`: a question nobody answers
// parks the task (docs/flows.md#questions-park-the-task), proven by real clicks inside a real VS Code
// (code-server + headless Chromium): the reference agent asks before a command in "Ask before edits
// and commands"; nobody answers for `offPeak.askParkMinutes` (1); the card shows Needs input with
// the question and "Waiting for your answer", the DB says needs_input and the ticket was released;
// Allow on the card queues the task, it resumes the same session (Running) and completes, and the
// command ran once. Then the morning report after that night: a second task fails before it
// starts (its folder was moved away while its ticket waited in the gateway's queue), the gateway
// goes down while a third task waits in its queue and the panel says it cannot be reached (no
// click); the morning summary's "1 failed" shows only that card; History has a Completed row and
// a Failed row with its reason (the Failure filter finds only it, a row expands to its prompt and
// when it was triggered), checked and shot at 1400 and 500 px. Screenshots go to test/artifacts/panel-tour-park/.
// (One tour for the night and its morning: they share the workbench, the gateway and the task.)
//
// Stand-in for the outside world: a scripted fake Anthropic upstream (test/fixtures/
// fake-anthropic-upstream.ts, a TEST FIXTURE) behind a reference gateway.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { FakeAnthropicUpstream, type RecordedRequest } from '../test/fixtures/fake-anthropic-upstream';
import { DEMO_KEY, runTour, TaskDb, Tour, until } from './vscode/tour';
import { openWorkbench, runCommand, setApiKey } from './vscode/workbench';
import { checkLayout } from './vscode/panel-checks';

type Block = { type: string; text?: string; is_error?: boolean };
type Body = { tools?: { name: string }[]; messages?: { role: string; content: string | Block[] }[] };
const COMMAND = 'echo ran >> ran.txt';

/** The scripted model: the command until it ran (asking again once the user's answer is stated), then done. */
function script(request: RecordedRequest) {
  const body = request.body as Body;
  const all = (body.messages ?? []).flatMap((m): Block[] =>
    typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content,
  );
  if (all.some((b) => b.type === 'tool_result' && b.is_error !== true)) return { kind: 'text' as const, text: 'Appended.' };
  const allowed = all.some((b) => b.type === 'text' && /ALLOWED: run_command/.test(b.text ?? ''));
  if (allowed || !all.some((b) => b.type === 'tool_use'))
    return { kind: 'tool_use' as const, name: 'run_command', input: { command: COMMAND } };
  return { kind: 'text' as const, text: 'Stopped.' };
}

runTour('panel-tour-park', async ({ browser, stateDir, userData, artifacts, log, gateway, codeServer, stopLater, onFailure }) => {
  const workspace = path.join(stateDir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const upstream = await FakeAnthropicUpstream.start();
  stopLater(() => upstream.close());
  upstream.setDefaultReply(script);
  // A new ticket waits 8 s in the queue: time for the morning's second task to lose its folder before it starts.
  const gw = await gateway(['--log-level', 'warn', '--upstream-url', upstream.url, '--queue-hold-ms', '8000'], {
    OFFPEAK_UPSTREAM_API_KEY: 'upstream-secret',
  });
  const server = await codeServer({
    userSettings: { 'workbench.colorTheme': 'Default Dark Modern' },
    machineSettings: {
      'offPeak.gatewayUrl': gw.url,
      'offPeak.agent': 'reference',
      'offPeak.unansweredQuestion': 'park',
      'offPeak.askParkMinutes': 1,
    },
  });
  const page = await openWorkbench(browser, `${server.origin}/?folder=${encodeURIComponent(workspace)}`, server.password);
  const db = await TaskDb.open(userData);
  const tour = new Tour(page, db, artifacts, log);
  onFailure(() => tour.shot('failure'));
  await setApiKey(page, DEMO_KEY);
  await runCommand(page, 'Open Off-Peak Tasks');
  await tour.panel('[data-testid="create-form"]');

  const prompt = 'Park tour: append ran to ran.txt';
  // The form's permission mode starts at "Ask before edits and commands".
  await tour.create(prompt);
  const card = tour.frame.locator('[data-testid="section-needs_input"] li.card', { hasText: prompt });
  await until(
    'the question on the card',
    async () => {
      await tour.panel();
      return (await card.locator('[data-testid="ask"]').count()) > 0;
    },
    120_000,
  );
  await tour.shot('asked');
  const parked = await until(
    'the task to park (nobody answers for a minute)',
    async () => {
      const row = db.byPrompt(prompt);
      return row?.status === 'needs_input' ? row : undefined;
    },
    150_000,
  );
  await tour.panel();
  await card.locator('[data-testid="ask-deadline"]', { hasText: 'Waiting for your answer since' }).waitFor({ timeout: 30_000 });
  assert.equal((await card.locator('[data-testid="ask-tool"]').innerText()).trim(), 'run_command');
  assert.match(await card.locator('[data-testid="ask-question"]').innerText(), /echo ran >> ran\.txt/);
  assert.equal(parked.server_ticket_id, null, 'the parked task holds no ticket');
  await tour.phaseOf(prompt, 'Needs input');
  await page.locator('.statusbar-item', { hasText: 'Off-Peak: 1 needs input' }).first().waitFor({ timeout: 30_000 });
  await tour.shot('parked-needs-input');
  log(`parked: the card shows Needs input with "${COMMAND}", the status bar says "1 needs input", and no ticket is held`);

  const toast = page.locator('.notifications-toasts .notification-list-item').filter({ hasText: 'asks to use' });
  await card.locator('[data-testid="ask-allow"]').click();
  // The "queued again" message goes at the task's next change, which comes at once: the card
  // leaving Needs input and the question's notification closing say the answer was taken.
  await until(
    'the card to leave Needs input',
    async () =>
      (await tour.frame.locator('[data-testid="section-needs_input"] li.card', { hasText: prompt }).count()) === 0 ? true : undefined,
    30_000,
  );
  await toast.first().waitFor({ state: 'detached', timeout: 30_000 });
  await until(
    'the task to run again',
    () => (['running', 'completed'].includes(db.byPrompt(prompt)?.status ?? '') ? true : undefined),
    120_000,
  );
  await tour.shot('allowed-resuming');
  await until('the task to complete', () => (db.byPrompt(prompt)?.status === 'completed' ? true : undefined), 120_000);
  await tour.phaseOf(prompt, 'Completed', 60_000);
  await tour.shot('completed');
  const done = db.byPrompt(prompt)!;
  assert.equal(done.session_id, parked.session_id, 'the same session resumed');
  assert.equal(readFileSync(path.join(workspace, 'ran.txt'), 'utf8'), 'ran\n', 'the command ran once');
  log('Allow on the parked card: queued, resumed the same session, completed; the command ran once');

  // --- The morning report --------------------------------------------------------------------
  // A task that fails before it starts: its folder is moved away while its ticket waits in the queue.
  const lost = 'Morning tour: a task whose folder went away';
  await tour.create(lost);
  const moved = `${workspace}-moved`;
  renameSync(workspace, moved);
  const failed = await until(
    'the second task to fail before it starts',
    () => {
      const row = db.byPrompt(lost);
      return row?.status === 'failed' ? row : undefined;
    },
    120_000,
  );
  renameSync(moved, workspace);
  assert.equal(failed.session_id, null, 'it never started');
  assert.match(failed.failure_reason ?? '', /no longer exists/);
  // The gateway goes down for the rest of the night while a third task waits in its queue.
  const waiting = 'Morning tour: a task that waits for the gateway';
  await tour.create(waiting);
  await until('the third task to hold its ticket', () => db.byPrompt(waiting)?.server_ticket_id ?? undefined);
  await gw.stop();
  // No click: the sync's poll of the queued ticket finds the gateway down, and the panel says so (one banner).
  await tour.panel();
  const outage = tour.frame.locator('[data-testid="gateway-health"]');
  await outage.waitFor({ timeout: 120_000 });
  // (": queue positions may be out of date" while it is still queued; a loaded machine may have let the gateway start it first.)
  assert.match((await outage.innerText()).trim(), /^The gateway cannot be reached(: queue positions may be out of date)?\./);
  assert.equal(await outage.count(), 1, 'one outage banner');
  await tour.shot('morning-outage-banner');
  log('outage: the gateway stopped with a task queued; the panel says it cannot be reached, with no click');
  const history = tour.frame.locator('[data-testid="history"]');
  const row = (text: string) => history.locator('.history-row', { hasText: text });
  await row(prompt).locator('[data-testid="history-status"]', { hasText: 'Completed' }).waitFor({ timeout: 30_000 });
  await row(lost).locator('[data-testid="history-status"]', { hasText: 'Failed' }).waitFor({ timeout: 30_000 });
  await row(lost).locator('[data-testid="history-expand"]').click();
  const details = row(lost).locator('[data-testid="history-details"]');
  assert.equal((await details.locator('[data-testid="prompt-text"]').innerText()).trim(), lost, 'the row expands to its prompt');
  assert.match(await details.locator('[data-testid="history-triggered"]').innerText(), /^Triggered /);
  assert.match(await details.locator('[data-testid="history-reason"]').innerText(), /no longer exists/);
  await tour.shot('morning-report');
  // The morning summary's "1 failed" shows only that card; clicked again, every card.
  const failedPart = tour.frame.locator('[data-testid="summary-failed"]');
  assert.equal((await failedPart.innerText()).trim(), '1 failed');
  await failedPart.click();
  await tour.card(prompt).waitFor({ state: 'detached', timeout: 15_000 });
  assert.equal(await tour.card(lost).count(), 1, 'the failed card stays');
  await tour.shot('morning-summary-failed');
  await failedPart.click();
  await tour.card(prompt).waitFor({ timeout: 15_000 });
  // The failure's notification covered History: gone for the layout shots, each taken with History at the top.
  await runCommand(page, 'Notifications: Clear All Notifications');
  const historyShot = async (name: string) => {
    await (await tour.panel()).evaluate(`document.querySelector('[data-testid="history"]').scrollIntoView({ block: 'start' })`);
    await tour.shot(name);
  };
  await checkLayout(page, () => tour.panel(), historyShot, 'morning', log);
  // The Failure filter finds only the failed task; Succeeded only the allowed one.
  const status = history.locator('[data-testid="history-filter-status"]');
  for (const [label, shown, hidden] of [
    ['Failure', lost, prompt],
    ['Succeeded', prompt, lost],
  ] as const) {
    await status.click();
    await status.locator('[role="option"]', { hasText: label }).first().click();
    await row(shown).waitFor({ timeout: 15_000 });
    await row(hidden).waitFor({ state: 'detached', timeout: 15_000 });
    await tour.shot(`morning-filter-${label.toLowerCase()}`);
  }
  log(
    'morning report: the summary\'s "1 failed" filter; Completed and Failed rows (its prompt, trigger time and reason on expand), each found by its History filter; layout at 1400 and 500 px',
  );
});
