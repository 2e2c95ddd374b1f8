// `npm run test:ui:runs`: tasks that RUN, proven by real clicks inside a real VS Code (code-server +
// headless Chromium), each checked in the panel, the task DB and the agent's processes; screenshots
// of every stage go to test/artifacts/panel-tour-runs/.
//   1. a window reload mid-run with the panel open: the panel comes back by itself (its expanded
//      card still expanded), the task resumes the same session and completes;
//   2. two workbench windows on one user-data dir: one lease holder, a task queued in one shows in
//      the other, Cancel clicked in one stops the agent running in the other;
//   3. a 3102 segment change during a run: 2 segments with their end reasons on the card, the
//      resume of the same session in the task's terminal, one History row;
//   4. Claude Code (the real `claude` CLI) in "Ask before edits and commands" mode: its asks come
//      through the extension's permission MCP server onto the card; Allow on one card lets the
//      command write its file, Deny on another refuses it;
//   5. a wrong API key: the panel says the gateway refused it (401) with a "Set API key…" button,
//      which sets a good key, and the panel says the gateway accepted it.
//
// Stand-ins for the outside world: reference gateways in demo mode, whose DEMO model drives the
// reference agent's tools (the `work` script, paced by --demo-step-ms), and for Claude Code a
// scripted fake Anthropic upstream (test/fixtures/fake-anthropic-upstream.ts, a TEST FIXTURE) behind
// a reference gateway. The extension is switched between them in the Settings editor.
//
// usage: node --import tsx scripts/panel-tour-runs.ts [--no-build] [--keep]   (--keep: keep the state dir)
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { isProcessAlive } from '../src/core/process-alive';
import { FakeAnthropicUpstream, type RecordedRequest } from '../test/fixtures/fake-anthropic-upstream';
import { ensureClaudeCode } from './setup-claude-code';
import { BYPASS_PERMISSIONS, DEMO_KEY, runTour, Tour, until } from './vscode/tour';
import { answerDialog, focusWorkbench, openWorkbench, runCommand, setApiKey, setSettingInUi, waitForWorkbench } from './vscode/workbench';

const PANEL_TAB = 'Off-Peak Tasks';
const SLOW_REPLY_MS = 60_000;

/**
 * Finds `text` in the terminal the panel shows, as a user does (Terminal: Focus Find, typed into
 * the find box, which scrolls to the match and highlights it), and returns the rows then in view
 * with the line breaks of wrapped rows removed (xterm renders its rows in view as DOM text here).
 */
async function findInTerminal(page: Page, text: string): Promise<string> {
  await focusWorkbench(page);
  await runCommand(page, 'Terminal: Focus Find');
  const input = page.locator('.part.panel .simple-find-part.visible input:visible').first();
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill(text);
  await input.press('Enter');
  const rows = page.locator('.part.panel .xterm-rows:visible').first();
  return until(
    `"${text}" in view in the terminal`,
    async () => {
      const shown = (await rows.innerText().catch(() => '')).replace(/\n/g, '');
      return shown.includes(text) ? shown : undefined;
    },
    10_000,
  ).catch(async (err: Error) => {
    throw new Error(`${err.message}; in view: ${await rows.innerText().catch(() => '')}`);
  });
}

/** The session id after "new session" / "resuming session" in the terminal's text. */
function sessionAfter(words: string, shown: string): string | undefined {
  return new RegExp(`${words} ([0-9a-f-]{36})`).exec(shown)?.[1];
}

type Block = { type: string; text?: string; is_error?: boolean; content?: unknown };
type Body = { tools?: { name: string }[]; messages?: { role: string; content: string | Block[] }[] };
const blocksOf = (request: RecordedRequest): Block[] =>
  ((request.body as Body).messages ?? []).flatMap((m) => (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content));

/**
 * The scripted model behind Claude Code: a Bash call that writes the file the prompt names (a
 * command, so "Ask before edits and commands" asks), then, once its result is in, done.
 */
function claudeScript(request: RecordedRequest) {
  const body = request.body as Body;
  if (!(body.tools ?? []).some((t) => t.name === 'Bash')) return { kind: 'text' as const, text: 'ok' }; // titles, summaries
  if (blocksOf(request).some((b) => b.type === 'tool_result')) return { kind: 'text' as const, text: 'Finished.' };
  const file = /claude-(?:allow|deny)\.txt/.exec(JSON.stringify(body.messages))?.[0] ?? 'claude-unnamed.txt';
  return {
    kind: 'tool_use' as const,
    name: 'Bash',
    input: { command: `node -e "require('fs').writeFileSync('${file}', 'asked')"`, description: `write ${file}` },
  };
}

runTour('panel-tour-runs', async ({ stateDir, userData, artifacts, log, gateway, codeServer, stopLater, openPanel }) => {
  const claude = ensureClaudeCode(log);
  const workspaceOne = path.join(stateDir, 'workspace-one');
  const workspaceTwo = path.join(stateDir, 'workspace-two');
  for (const dir of [workspaceOne, workspaceTwo]) mkdirSync(dir, { recursive: true });
  // The working demo model with no demo holds: a task is admitted at once. `long`: one segment
  // outlasts the run (30 paced replies); `short`: 4 s segments, so the run meets a 3102.
  const work = ['--log-level', 'warn', '--demo-script', 'work', '--queue-hold-ms', '0', '--admission-hold-ms', '0'];
  const long = await gateway([...work, '--demo-step-ms', '1000', '--active-window-ms', '600000']);
  const short = await gateway([...work, '--demo-step-ms', '500', '--active-window-ms', '4000']);
  // Each model reply takes a minute: an agent waiting for one stops at once only if Cancel reaches it.
  const slow = await gateway([...work, '--demo-step-ms', String(SLOW_REPLY_MS), '--active-window-ms', '600000']);
  const upstream = await FakeAnthropicUpstream.start();
  stopLater(() => upstream.close());
  upstream.setDefaultReply(claudeScript);
  const claudeGateway = await gateway(['--log-level', 'warn', '--upstream-url', upstream.url], {
    OFFPEAK_UPSTREAM_API_KEY: 'upstream-secret',
  });
  log(
    `gateways: long segments ${long.url}, 4 s segments ${short.url}, slow replies ${slow.url}, Claude Code's (scripted upstream ${upstream.url}) ${claudeGateway.url}`,
  );

  const server = await codeServer({
    // The DOM renderer: the terminal's rows are then text the tour can read (WebGL draws pixels).
    userSettings: { 'workbench.colorTheme': 'Default Dark Modern', 'terminal.integrated.gpuAcceleration': 'off' },
    machineSettings: { 'offPeak.gatewayUrl': long.url, 'offPeak.claudeCodePath': claude, 'offPeak.agent': 'reference' }, // Claude Code only once the tour chooses it
  });
  const { page, db, tour } = await openPanel(server, workspaceOne);

  // --- 1. A window reload mid-run: the same session resumes and completes --------------------
  const reloaded = 'Runs one: survive a reload, then write reload.txt';
  await tour.create(reloaded, BYPASS_PERMISSIONS);
  await tour.phaseOf(reloaded, 'Running', 60_000);
  const before = await until(
    'the agent running with its session',
    () => {
      const row = db.byPrompt(reloaded);
      const agent = row ? db.runningAgents(row.id)[0] : undefined;
      return row?.session_id && agent ? { row, agent } : undefined;
    },
    60_000,
  );
  // Once the agent has had a tool result: the resumed conversation then says it resumed, and the
  // demo model finishes the task at once instead of reviewing for 30 replies again.
  await until("the agent's first tool result", () => /⎿/.test(db.agentOutput(before.row.id)), 60_000);
  await tour.click(reloaded, 'expand');
  await tour.card(reloaded).locator('[data-testid="details"]').waitFor();
  await tour.shot('running-before-reload');
  await focusWorkbench(page);
  const reloading = page.waitForEvent('framenavigated', { predicate: (frame) => frame === page.mainFrame(), timeout: 60_000 });
  await runCommand(page, 'Developer: Reload Window');
  await reloading;
  await waitForWorkbench(page);
  log(`reloaded the window while the agent (pid ${before.agent.pid}, session ${before.row.session_id}) ran`);
  // No command: the panel that was open comes back by itself, its expanded card still expanded.
  await tour.panel(`[data-testid="card-${before.row.id}"] [data-testid="details"]`, 90_000);
  assert.equal(await page.locator('.tab', { hasText: PANEL_TAB }).count(), 1, 'one panel tab after the reload');
  await tour.shot('panel-restored-after-reload');
  log('reload with the panel open: the panel came back with its expanded card');
  await tour.phaseOf(reloaded, 'Completed', 180_000);
  const afterReload = db.byPrompt(reloaded)!;
  assert.equal(afterReload.status, 'completed');
  assert.equal(afterReload.session_id, before.row.session_id, 'the same session after the reload');
  assert.equal(isProcessAlive(before.agent.pid), false, "the first segment's agent is gone");
  assert.ok(existsSync(path.join(workspaceOne, 'reload.txt')), 'the resumed session wrote reload.txt');
  const reloadTickets = db.tickets(afterReload.id);
  assert.deepEqual(
    reloadTickets.map((t) => t.end_reason),
    ['completed'],
    'one ticket, its segment resumed after the reload and ended completed',
  );
  await tour.click(reloaded, 'terminal');
  const resumedLine = sessionAfter('resuming session', await findInTerminal(page, 'resuming session'));
  assert.equal(resumedLine, before.row.session_id, 'the terminal shows the resume of the same session');
  await tour.shot('completed-after-reload');
  log(`reload mid-run: resumed session ${resumedLine} and completed (tickets: ${reloadTickets.map((t) => t.end_reason).join(', ')})`);

  // --- 2. Two windows on one user-data dir ------------------------------------------------
  await setSettingInUi(page, 'offPeak.gatewayUrl', slow.url, PANEL_TAB, { remote: true, userData });
  await page.waitForTimeout(3000);
  await tour.panel('[data-testid="new-task"]');
  const second = await openWorkbench(page.context(), `${server.origin}/?folder=${encodeURIComponent(workspaceTwo)}`, server.password);
  const other = new Tour(second, db, artifacts, log);
  await runCommand(second, 'Open Off-Peak Tasks');
  await other.panel('[data-testid="new-task"]');
  const windows = await until(
    'both windows registered on the DB',
    () => {
      const rows = db.windows();
      return rows.length === 2 ? rows : undefined;
    },
    60_000,
  );
  const lease = db.lease();
  assert.ok(lease, 'a lease file beside the DB');
  assert.equal(windows.filter((w) => w.window_id === lease.holder).length, 1, 'the lease is held by one of the two windows');
  const windowTwo = windows.find((w) => w.workspace_keys.includes(workspaceTwo));
  assert.ok(windowTwo, 'the second window registered with its folder');
  log(`two windows: ${windows.map((w) => `${w.window_id} (pid ${w.pid})`).join(', ')}; lease holder ${lease.holder}`);

  const crossing = 'Runs two: queued in the second window, cancelled from the first';
  await other.typePrompt(crossing);
  await other.choose('permission-mode', BYPASS_PERMISSIONS);
  await other.submit();
  await answerDialog(second, 'Queue with Bypass Permissions');
  const queuedAt = Date.now();
  await tour.card(crossing).waitFor({ timeout: 30_000 });
  const shownAfterMs = Date.now() - queuedAt;
  log(`a task queued in the second window showed in the first after ${shownAfterMs} ms`);
  await tour.phaseOf(crossing, 'Running', 60_000);
  const crossRow = db.byPrompt(crossing)!;
  const remoteAgent = await until('the agent running', () => db.runningAgents(crossRow.id)[0], 60_000);
  assert.equal(remoteAgent.hostPid, windowTwo.pid, "the agent runs in the second window's extension host");
  await tour.shot('two-windows-running-elsewhere');
  await tour.click(crossing, 'cancel');
  const cancelText = await answerDialog(page, 'Cancel Task');
  assert.match(cancelText, /agent running this task is stopped/);
  const cancelledAt = Date.now();
  // Well within the model's reply time: the agent did not stop at its next model call.
  await until('the agent in the second window to stop', () => !isProcessAlive(remoteAgent.pid), SLOW_REPLY_MS / 3);
  log(`Cancel clicked in the first window stopped the agent in the second after ${Date.now() - cancelledAt} ms`);
  await until('cancelled in the DB', () => db.byPrompt(crossing)?.status === 'cancelled');
  await other.phaseOf(crossing, 'Cancelled');
  await tour.phaseOf(crossing, 'Cancelled');
  await other.shot('two-windows-cancelled-second');
  await tour.shot('two-windows-cancelled-first');
  log('two windows: one lease holder; queued in one, shown in the other; Cancel in one stopped the agent in the other');
  await second.close();

  // --- 3. A 3102 segment change during a run ----------------------------------------------
  await setSettingInUi(page, 'offPeak.gatewayUrl', short.url, PANEL_TAB, { remote: true, userData });
  await page.waitForTimeout(3000);
  await tour.panel('[data-testid="new-task"]');
  const segmented = 'Runs three: meet a segment end, then write segments.txt';
  await tour.create(segmented, BYPASS_PERMISSIONS);
  await until(
    'the task to complete',
    async () => {
      await tour.panel();
      return (await tour.card(segmented).locator('[data-testid="phase"]', { hasText: 'Completed' }).count()) > 0;
    },
    180_000,
  );
  const segRow = db.byPrompt(segmented)!;
  assert.deepEqual(
    db.tickets(segRow.id).map((t) => t.end_reason),
    ['expired', 'completed'],
    'two tickets: a segment end, then completion',
  );
  assert.ok(existsSync(path.join(workspaceOne, 'segments.txt')), 'the second segment wrote segments.txt');
  await tour.click(segmented, 'expand');
  await tour.card(segmented).locator('[data-testid="segment"]').nth(1).waitFor();
  const reasons = await tour.card(segmented).locator('[data-testid="end-reason"]').allInnerTexts();
  assert.deepEqual(reasons, ['segment ended (time limit)', 'completed'], 'the card shows both segments with their end reasons');
  const historyRows = tour.frame.locator('.history-row', { hasText: segmented });
  await historyRows.first().locator('.status', { hasText: 'Completed' }).waitFor();
  assert.equal(await historyRows.count(), 1, 'one History row for the two segments');
  await tour.shot('segment-change-two-segments');
  await historyRows.first().locator('[data-testid="session"]').click();
  assert.equal(sessionAfter('new session', await findInTerminal(page, 'new session')), segRow.session_id, 'segment 1 started the session');
  await findInTerminal(page, 'Segment 2 ·');
  assert.equal(
    sessionAfter('resuming session', await findInTerminal(page, 'resuming session')),
    segRow.session_id,
    'segment 2 resumed the same session',
  );
  await tour.shot('segment-change-terminal');
  log(`3102 segment change: segments ${reasons.join(' | ')}; terminal: new then resuming session ${segRow.session_id}; one History row`);

  // --- 4. Claude Code asks through the permission MCP server: Allow, Deny -----------------
  await setSettingInUi(page, 'offPeak.agent', 'Claude Code', PANEL_TAB, { remote: true, userData }); // a machine setting (a workspace cannot choose the agent); the drop-down shows the value's label
  await setSettingInUi(page, 'offPeak.gatewayUrl', claudeGateway.url, PANEL_TAB, { remote: true, userData });
  await page.waitForTimeout(3000);
  await tour.panel('[data-testid="new-task"]');
  for (const decision of ['allow', 'deny'] as const) {
    const file = `claude-${decision}.txt`;
    const prompt = `Runs Claude Code ${decision}: write ${file} with Bash`;
    // The form's permission mode starts at "Ask before edits and commands".
    await tour.create(prompt);
    const card = tour.frame.locator('[data-testid="section-needs_input"] li.card', { hasText: prompt });
    await until(
      'the ask on the card',
      async () => {
        await tour.panel();
        const row = db.byPrompt(prompt);
        assert.ok(
          !row || !['completed', 'failed'].includes(row.status),
          `the task ended without asking: ${row?.status} ${row?.failure_reason ?? ''}`,
        );
        return (await card.locator('[data-testid="ask"]').count()) > 0;
      },
      180_000,
    );
    const tool = await card.locator('[data-testid="ask-tool"]').innerText();
    const question = await card.locator('[data-testid="ask-question"]').innerText();
    assert.equal(tool.trim(), 'Bash');
    assert.match(question, new RegExp(file.replace('.', '\\.')));
    assert.equal(existsSync(path.join(workspaceOne, file)), false, 'nothing ran before the answer');
    await tour.shot(`claude-needs-input-${decision}`);
    await card.locator(`[data-testid="ask-${decision}"]`).click();
    await until(
      `the ${decision} task to end`,
      async () => {
        await tour.panel();
        const row = db.byPrompt(prompt);
        return row && ['completed', 'failed'].includes(row.status) ? row : undefined;
      },
      180_000,
    );
    const done = db.byPrompt(prompt)!;
    assert.equal(done.status, 'completed', `failed: ${done.failure_reason}`);
    assert.equal(db.agentOf(done.id), 'claude-code', 'the task ran with Claude Code');
    const mcpConfig = path.join(db.segmentDirs(done.id)[0], 'claude-mcp.json');
    assert.match(readFileSync(mcpConfig, 'utf8'), /permission-mcp\.js/, "Claude Code was given the extension's permission MCP server");
    assert.equal(
      existsSync(path.join(workspaceOne, file)),
      decision === 'allow',
      `${file} ${decision === 'allow' ? 'written after Allow' : 'not written after Deny'}`,
    );
    // The tasks run one after the other: the last tool result the model saw is this task's.
    const result = upstream
      .messageRequests()
      .flatMap(blocksOf)
      .filter((b) => b.type === 'tool_result')
      .at(-1);
    assert.ok(result, 'the model saw the tool result');
    assert.equal(
      result.is_error === true,
      decision === 'deny',
      `the model was told the command ${decision === 'deny' ? 'was refused' : 'ran'}`,
    );
    await tour.phaseOf(prompt, 'Completed');
    // A refused write stays visible on the finished card, not a plain "Completed" (docs/flows.md#questions-park-the-task).
    const refusals = tour.card(prompt).locator('[data-testid="refusals"]');
    if (decision === 'deny')
      await until(
        'the card to say the write was denied',
        async () => /1 action denied/.test((await refusals.allInnerTexts()).join(' ')),
        30_000,
      );
    else assert.equal(await refusals.count(), 0, 'nothing was denied on the Allow card');
    await tour.shot(`claude-${decision}-completed`);
    log(
      `Claude Code: ${decision} clicked on "${tool}: ${question}"; ${file} ${decision === 'allow' ? 'written' : 'not written'}; the task completed`,
    );
  }
  log(
    'Claude Code in "Ask before edits and commands": Allow let its command write the file, Deny refused it and its card says "1 action denied"; both tasks completed',
  );

  // --- 5. A wrong API key: refused (401), with the button that sets another -----------------
  await setApiKey(page, 'opk-wrong-key-0000');
  await tour.panel();
  const refusal = tour.frame.locator('[data-testid="key-refused"]');
  await refusal.waitFor({ timeout: 60_000 });
  const refusalText = (await refusal.innerText()).replace(/\s+/g, ' ').trim();
  assert.match(refusalText, /The gateway refused the API key \(401\)\./);
  assert.equal(await tour.frame.locator('[data-testid="gateway-health"]').count(), 0, 'not shown as an outage');
  await tour.shot('wrong-key-refused');
  await refusal.locator('[data-testid="key-refused-set"]').click();
  const keyBox = page.locator('.quick-input-widget .quick-input-box input[type="password"]');
  await keyBox.waitFor({ state: 'visible', timeout: 10_000 });
  await keyBox.fill(DEMO_KEY);
  await page.waitForTimeout(500);
  await keyBox.press('Enter');
  await tour.frame.locator('[data-testid="message"]', { hasText: 'The gateway accepted the API key.' }).waitFor({ timeout: 30_000 });
  await refusal.waitFor({ state: 'detached', timeout: 30_000 });
  await tour.shot('good-key-accepted');
  log(`wrong key: "${refusalText}"; its button set a good key and the panel said the gateway accepted it`);
});
