// `npm run test:ui:sessions`: "Follow up…" and "Open session" by real clicks inside a real VS Code
// (code-server + headless Chromium), each checked in the panel, the task DB, the model requests
// and the processes; screenshots of every stage go to test/artifacts/panel-tour-sessions/.
//   1. the reference agent: a task completes; Follow up… on its card queues new instructions as a
//      new task, marked "follow-up of <title>" on its card and History row, which resumes the
//      same session (the model sees the first task's turns) and completes;
//   2. Claude Code (the real `claude` CLI): a task completes; Open session on its card opens a
//      terminal running `claude --resume <its session id>` in the task's folder, without the
//      off-peak proxy in its environment; Follow Up on Task… from the command palette queues a
//      follow-up that resumes that session.
//
// Stand-in for the outside world: a scripted fake Anthropic upstream (test/fixtures/
// fake-anthropic-upstream.ts, a TEST FIXTURE) behind a reference gateway.
//
// usage: node --import tsx scripts/panel-tour-sessions.ts [--no-build] [--keep]
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { FakeAnthropicUpstream, type RecordedRequest } from '../test/fixtures/fake-anthropic-upstream';
import { ensureClaudeCode } from './setup-claude-code';
import { runTour, until } from './vscode/tour';
import { focusWorkbench, runCommand, setSettingInUi } from './vscode/workbench';

const PANEL_TAB = 'Off-Peak Tasks';
const PROXY_DUMMY_TOKEN = 'offpeak-local-proxy';

type Body = { tools?: unknown[]; messages?: { role: string; content: string | { type: string; text?: string }[] }[] };

/** The conversation's texts, "role: text" (Claude Code's reminders left out). */
function texts(request: RecordedRequest): string[] {
  return ((request.body as Body).messages ?? []).flatMap((m) =>
    (typeof m.content === 'string' ? [m.content] : m.content.filter((c) => c.type === 'text').map((c) => c.text ?? ''))
      .filter((t) => !t.startsWith('<system-reminder>'))
      .map((t) => `${m.role}: ${t}`),
  );
}

const isMain = (r: RecordedRequest) => ((r.body as Body).tools ?? []).length > 0;

/** Processes whose argv is `<program> --resume <sessionId>` with no `-p` (an interactive Claude Code). */
function interactiveResumes(sessionId: string): { pid: number; argv: string[]; cwd: string; env: Record<string, string> }[] {
  const found: { pid: number; argv: string[]; cwd: string; env: Record<string, string> }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      const at = argv.indexOf('--resume');
      if (at < 0 || argv[at + 1] !== sessionId || argv.includes('-p')) continue;
      const env = Object.fromEntries(
        readFileSync(`/proc/${entry}/environ`, 'utf8')
          .split('\0')
          .filter(Boolean)
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      );
      found.push({ pid: Number(entry), argv, cwd: readlinkSync(`/proc/${entry}/cwd`), env });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

runTour('panel-tour-sessions', async ({ stateDir, userData, log, gateway, codeServer, stopLater, openPanel }) => {
  const claude = ensureClaudeCode(log);
  const workspace = path.join(stateDir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const upstream = await FakeAnthropicUpstream.start();
  stopLater(() => upstream.close());
  // Every answer is text: each task (and follow-up) completes at its first reply.
  upstream.setDefaultReply((request) => {
    if (!isMain(request)) return { kind: 'text', text: 'ok' }; // Claude Code's titles and summaries
    const last = texts(request).at(-1) ?? '';
    return {
      kind: 'text',
      text: /code word/i.test(last) && /Which/.test(last) ? 'The code word was PELICAN.' : 'Noted: the code word is PELICAN.',
    };
  });
  const gw = await gateway(['--log-level', 'warn', '--upstream-url', upstream.url], { OFFPEAK_UPSTREAM_API_KEY: 'upstream-secret' });
  const server = await codeServer({
    userSettings: { 'workbench.colorTheme': 'Default Dark Modern', 'terminal.integrated.gpuAcceleration': 'off' },
    machineSettings: { 'offPeak.gatewayUrl': gw.url, 'offPeak.claudeCodePath': claude, 'offPeak.agent': 'reference' }, // Claude Code only once the tour chooses it
  });
  const { page, db, tour } = await openPanel(server, workspace);

  // --- 1. Reference agent: Follow up… on the card -------------------------------------------
  const first = 'Sessions one: remember the code word PELICAN';
  await tour.create(first);
  await tour.phaseOf(first, 'Completed', 120_000);
  const firstRow = db.byPrompt(first)!;
  assert.ok(firstRow.session_id, 'the first task has a session');
  const mainBefore = upstream.messageRequests().filter(isMain).length;
  await tour.shot('reference-completed');
  await tour.click(first, 'follow-up');
  const form = tour.card(first).locator('[data-testid="follow-up-form"]');
  await form.waitFor();
  await form.locator('[data-testid="follow-up-prompt"] textarea').fill('Which code word did I give you?');
  await tour.shot('reference-follow-up-form');
  await form.locator('[data-testid="follow-up-submit"]').click();
  const followTitle = 'Follow-up: Which code word did I give you?';
  await tour.card(followTitle).waitFor({ timeout: 30_000 });
  assert.match(
    await tour.card(followTitle).locator('[data-testid="follow-up-of"]').innerText(),
    /follow-up of Sessions one: remember the code word PELICAN/,
  );
  await tour.phaseOf(followTitle, 'Completed', 120_000);
  const followRow = db.byPrompt('Which code word did I give you?')!;
  assert.notEqual(followRow.id, firstRow.id, 'a task of its own');
  assert.equal(followRow.session_id, firstRow.session_id, 'it resumed the same session');
  assert.equal(db.tickets(followRow.id).length, 1, 'its own ticket');
  assert.notEqual(db.tickets(followRow.id)[0].ticket_id, db.tickets(firstRow.id)[0].ticket_id);
  const said = texts(upstream.messageRequests().filter(isMain)[mainBefore]);
  assert.ok(
    said.includes(`user: ${first}`) && said.includes('assistant: Noted: the code word is PELICAN.'),
    `the model saw the first task's turns: ${JSON.stringify(said)}`,
  );
  const followHistory = tour.frame.locator('.history-row', { hasText: followTitle });
  await followHistory.locator('[data-testid="follow-up-of"]').waitFor();
  await tour.click(followTitle, 'expand');
  const details = tour.card(followTitle).locator('[data-testid="details"]');
  await details.locator('[data-testid="follow-up-of"]', { hasText: `follow-up of ${first}` }).waitFor();
  await tour.shot('reference-follow-up-completed');
  log(
    `reference agent: Follow up… made task ${followRow.id}, which resumed session ${followRow.session_id} of ${firstRow.id} and completed`,
  );

  // --- 2. Claude Code: Open session, and Follow Up on Task… from the palette ------------------
  await setSettingInUi(page, 'offPeak.agent', 'Claude Code', PANEL_TAB, { remote: true, userData }); // a machine setting (a workspace cannot choose the agent); the drop-down shows the value's label
  await tour.panel('[data-testid="new-task"]');
  const claudeTask = 'Sessions two: Claude Code, remember the code word PELICAN';
  await tour.create(claudeTask);
  await tour.phaseOf(claudeTask, 'Completed', 180_000);
  const claudeRow = db.byPrompt(claudeTask)!;
  assert.equal(db.agentOf(claudeRow.id), 'claude-code');
  assert.ok(claudeRow.session_id);
  await tour.click(claudeTask, 'open-session');
  const running = await until('an interactive `claude --resume <session>`', () => interactiveResumes(claudeRow.session_id!)[0], 60_000);
  assert.equal(running.argv[0], claude, 'the program itself, no shell');
  assert.deepEqual(
    running.argv.slice(1),
    ['--resume', claudeRow.session_id, '--setting-sources', 'user', '--strict-mcp-config'],
    'the setting sources its segments ran with',
  );
  assert.equal(realpathSync(running.cwd), realpathSync(workspace), "in the task's folder");
  assert.notEqual(running.env.ANTHROPIC_AUTH_TOKEN, PROXY_DUMMY_TOKEN, "not the proxy's token");
  assert.ok(!/127\.0\.0\.1/.test(running.env.ANTHROPIC_BASE_URL ?? ''), 'not the loopback proxy');
  // What the user's own Claude Code shows (without network here: that it cannot reach ITS endpoint, not the proxy).
  const rows = page.locator('.part.panel .xterm-rows:visible').first();
  const shown = await until(
    'Claude Code drawing its first screen',
    async () => {
      const text = (await rows.innerText().catch(() => '')).replace(/\s+/g, ' ').trim();
      return /Claude Code/.test(text) && text.length > 40 ? text : undefined;
    },
    30_000,
  ).catch(async () => (await rows.innerText().catch(() => '')).replace(/\s+/g, ' ').trim());
  await tour.shot('claude-open-session-terminal');
  log(`Open session: pid ${running.pid} runs ${running.argv.join(' ')} in ${running.cwd}; it shows: ${shown.slice(0, 200)}`);
  // Close it before following up: a window refuses a follow-up while its own Claude Code runs on the session.
  await focusWorkbench(page);
  await runCommand(page, 'Terminal: Kill the Active Terminal Instance');
  await until('the interactive Claude Code to stop', () => interactiveResumes(claudeRow.session_id!).length === 0, 30_000);

  await focusWorkbench(page);
  await runCommand(page, 'Follow Up on Task…');
  const pick = page.locator('.quick-input-widget .monaco-list-row', { hasText: claudeTask.slice(0, 40) }).first();
  await pick.waitFor({ timeout: 10_000 });
  await pick.click();
  const box = page.locator('.quick-input-widget .quick-input-box input');
  await box.waitFor({ state: 'visible', timeout: 10_000 });
  await box.fill('Which code word did I give you, Claude?');
  await page.waitForTimeout(300);
  await box.press('Enter');
  const claudeFollow = await until('the palette follow-up in the DB', () => db.byPrompt('Which code word did I give you, Claude?'), 30_000);
  await runCommand(page, 'Open Off-Peak Tasks');
  await tour.panel();
  await tour.phaseOf('Follow-up: Which code word did I give you, Claude?', 'Completed', 180_000);
  assert.equal(
    db.byPrompt('Which code word did I give you, Claude?')!.session_id,
    claudeRow.session_id,
    'the Claude Code follow-up resumed the same session',
  );
  await tour.shot('claude-follow-up-completed');
  log(
    `Claude Code: Open session ran claude --resume ${claudeRow.session_id}; the palette follow-up ${claudeFollow.id} resumed it and completed`,
  );
});
