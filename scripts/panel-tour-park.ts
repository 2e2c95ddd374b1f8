// `node --import tsx scripts/panel-tour-park.ts [--no-build] [--keep]`: a question nobody answers
// parks the task (docs/flows.md#questions-park-the-task), proven by real clicks inside a real VS Code
// (code-server + headless Chromium): the reference agent asks before a command in "Ask before edits
// and commands"; nobody answers for `offPeak.askParkMinutes` (1); the card shows Needs input with
// the question and "Waiting for your answer", the DB says needs_input and the ticket was released;
// Allow on the card queues the task, it resumes the same session (Running) and completes, and the
// command ran once. Screenshots go to test/artifacts/panel-tour-park/.
//
// Stand-in for the outside world: a scripted fake Anthropic upstream (test/fixtures/
// fake-anthropic-upstream.ts, a TEST FIXTURE) behind a reference gateway.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { FakeAnthropicUpstream, type RecordedRequest } from '../test/fixtures/fake-anthropic-upstream';
import { DEMO_KEY, runTour, TaskDb, Tour, until } from './vscode/tour';
import { openWorkbench, runCommand, setApiKey } from './vscode/workbench';

type Block = { type: string; text?: string; is_error?: boolean };
type Body = { tools?: { name: string }[]; messages?: { role: string; content: string | Block[] }[] };
const COMMAND = 'echo ran >> ran.txt';

/** The scripted model: the command until it ran (asking again once the user's answer is stated), then done. */
function script(request: RecordedRequest) {
  const body = request.body as Body;
  const all = (body.messages ?? []).flatMap((m): Block[] => (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content));
  if (all.some((b) => b.type === 'tool_result' && b.is_error !== true)) return { kind: 'text' as const, text: 'Appended.' };
  const allowed = all.some((b) => b.type === 'text' && /ALLOWED: run_command/.test(b.text ?? ''));
  if (allowed || !all.some((b) => b.type === 'tool_use')) return { kind: 'tool_use' as const, name: 'run_command', input: { command: COMMAND } };
  return { kind: 'text' as const, text: 'Stopped.' };
}

runTour('panel-tour-park', async ({ browser, stateDir, userData, artifacts, log, gateway, codeServer, stopLater, onFailure }) => {
  const workspace = path.join(stateDir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const upstream = await FakeAnthropicUpstream.start();
  stopLater(() => upstream.close());
  upstream.setDefaultReply(script);
  const gw = await gateway(['--log-level', 'warn', '--upstream-url', upstream.url], { OFFPEAK_UPSTREAM_API_KEY: 'upstream-secret' });
  const server = await codeServer({
    userSettings: { 'workbench.colorTheme': 'Default Dark Modern' },
    machineSettings: { 'offPeak.gatewayUrl': gw.url, 'offPeak.agent': 'reference', 'offPeak.unansweredQuestion': 'park', 'offPeak.askParkMinutes': 1 },
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
  await until('the question on the card', async () => {
    await tour.panel();
    return (await card.locator('[data-testid="ask"]').count()) > 0;
  }, 120_000);
  await tour.shot('asked');
  const parked = await until('the task to park (nobody answers for a minute)', async () => {
    const row = db.byPrompt(prompt);
    return row?.status === 'needs_input' ? row : undefined;
  }, 150_000);
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
  await until('the card to leave Needs input', async () => ((await tour.frame.locator('[data-testid="section-needs_input"] li.card', { hasText: prompt }).count()) === 0 ? true : undefined), 30_000);
  await toast.first().waitFor({ state: 'detached', timeout: 30_000 });
  await until('the task to run again', () => (['running', 'completed'].includes(db.byPrompt(prompt)?.status ?? '') ? true : undefined), 120_000);
  await tour.shot('allowed-resuming');
  await until('the task to complete', () => (db.byPrompt(prompt)?.status === 'completed' ? true : undefined), 120_000);
  await tour.phaseOf(prompt, 'Completed', 60_000);
  await tour.shot('completed');
  const done = db.byPrompt(prompt)!;
  assert.equal(done.session_id, parked.session_id, 'the same session resumed');
  assert.equal(readFileSync(path.join(workspace, 'ran.txt'), 'utf8'), 'ran\n', 'the command ran once');
  log('Allow on the parked card: queued, resumed the same session, completed; the command ran once');
});
