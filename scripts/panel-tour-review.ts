// `npm run test:ui:review`: Review changes, Merge and Discard by real clicks inside a real VS Code
// (code-server + headless Chromium), checked in the workbench and in the repository itself;
// screenshots of every stage go to test/artifacts/panel-tour-review/ (docs/flows.md#review,
// docs/flows.md#bring-it-home):
//   1. a task on a git folder runs on its own branch and writes 200 files; Review changes on its
//      card opens the multi-file diff editor listing its 200 files (the time from the click to the
//      editor is printed, and written to bench/results/review.json as review_open_200_ms when
//      OFFPEAK_RECORD_BENCH=1 is set: `npm test` leaves bench/results/ as it is);
//   2. Merge on the card (confirmed in the modal): the folder's branch has the task's commit;
//   3. a second task; Discard on its card (confirmed): its branch and worktree are gone.
//
// Stand-in for the outside world: a scripted fake Anthropic upstream (test/fixtures/
// fake-anthropic-upstream.ts, a TEST FIXTURE) behind a reference gateway.
//
// usage: node --import tsx scripts/panel-tour-review.ts [--no-build] [--keep]
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FakeAnthropicUpstream, type RecordedRequest } from '../test/fixtures/fake-anthropic-upstream';
import { BYPASS_PERMISSIONS, DEMO_KEY, gitWorkspace, runTour, Tour, TaskDb, until } from './vscode/tour';
import { answerDialog, openWorkbench, runCommand, setApiKey } from './vscode/workbench';

const FILES = 200;
type Body = { messages?: { role: string; content: string | { type: string; text?: string }[] }[] };

/** The first user text of the conversation (the task's prompt) and how many tool calls came before. */
function turn(request: RecordedRequest): { prompt: string; calls: number } {
  const messages = (request.body as Body).messages ?? [];
  const first = messages[0]?.content;
  const prompt = typeof first === 'string' ? first : (first?.find((c) => c.type === 'text')?.text ?? '');
  return {
    prompt,
    calls: messages.filter((m) => m.role === 'assistant' && Array.isArray(m.content) && m.content.some((c) => c.type === 'tool_use'))
      .length,
  };
}

runTour('panel-tour-review', async ({ browser, stateDir, userData, artifacts, log, gateway, codeServer, stopLater, onFailure }) => {
  const { workspace, git } = gitWorkspace(stateDir, { 'README.md': '# review tour\n' });

  const upstream = await FakeAnthropicUpstream.start();
  stopLater(() => upstream.close());
  upstream.setDefaultReply((request) => {
    const { prompt, calls } = turn(request);
    if (calls > 0) return { kind: 'text', text: 'Done.' };
    if (/200 files/.test(prompt))
      return {
        kind: 'tool_use',
        name: 'run_command',
        input: { command: `mkdir -p gen && for i in $(seq 1 ${FILES}); do echo "line $i" > gen/file-$i.txt; done` },
      };
    return { kind: 'tool_use', name: 'write_file', input: { path: 'scratch.txt', content: 'to be discarded\n' } };
  });
  const gw = await gateway(['--log-level', 'warn', '--upstream-url', upstream.url], { OFFPEAK_UPSTREAM_API_KEY: 'upstream-secret' });
  const server = await codeServer({
    userSettings: { 'workbench.colorTheme': 'Default Dark Modern', 'git.enabled': false },
    machineSettings: { 'offPeak.gatewayUrl': gw.url },
  });
  const page = await openWorkbench(browser, `${server.origin}/?folder=${encodeURIComponent(workspace)}`, server.password);
  const db = await TaskDb.open(userData);
  const tour = new Tour(page, db, artifacts, log);
  onFailure(() => tour.shot('failure'));
  await setApiKey(page, DEMO_KEY);
  await runCommand(page, 'Open Off-Peak Tasks');
  await tour.panel('[data-testid="create-form"]');

  // --- 1. Review changes: the multi-file diff editor with the task's 200 files -------------
  const first = 'Review tour: write 200 files';
  await tour.typePrompt(first);
  assert.equal(
    await tour.frame.locator('[data-testid="own-branch"] input').isChecked(),
    true,
    '"Run on its own branch" starts checked on a git folder',
  );
  await tour.choose('permission-mode', BYPASS_PERMISSIONS);
  await tour.submit();
  await answerDialog(page, 'Queue with Bypass Permissions');
  await tour.card(first).waitFor({ timeout: 30_000 });
  await tour.phaseOf(first, 'Completed', 180_000);
  await tour.card(first).locator('[data-testid="changed-files"]').waitFor();
  await tour
    .card(first)
    .locator('[data-testid="all-changed-files"]', { hasText: `Show all ${FILES} changed files` })
    .click();
  await until(
    'every changed file listed',
    async () => (await tour.card(first).locator('[data-testid="changed-files"] li').count()) === FILES,
  );
  await tour.card(first).locator('[data-testid="changed-files"] li', { hasText: 'gen/file-1.txt' }).first().scrollIntoViewIfNeeded();
  assert.ok(!existsSync(path.join(workspace, 'gen')), "the task wrote in its worktree, not in the user's folder");
  await tour.shot('completed-with-changed-files');
  const clicked = Date.now();
  await tour.click(first, 'review-changes');
  const tab = page.locator('.tabs-container .tab', { hasText: `${FILES} changed files` });
  await tab.waitFor({ timeout: 60_000 });
  // The editor has drawn its first files (their names in the entry headers, a diff below them).
  const editor = page.locator('.multiDiffEditor').first();
  await editor.getByText('file-1.txt').first().waitFor({ timeout: 60_000 });
  await editor.locator('.monaco-diff-editor').first().waitFor({ timeout: 60_000 });
  const reviewOpenMs = Date.now() - clicked;
  await tour.shot('review-changes-multi-diff-editor');
  log(`Review changes: the multi-file diff editor "${(await tab.innerText()).trim()}" opened ${reviewOpenMs} ms after the click`);
  const results = path.join(import.meta.dirname, '..', 'bench', 'results', 'review.json');
  if (process.env.OFFPEAK_RECORD_BENCH === '1' && existsSync(results)) {
    const json = JSON.parse(readFileSync(results, 'utf8')) as Record<string, unknown>;
    writeFileSync(
      results,
      JSON.stringify(
        {
          ...json,
          review_open_200_ms: reviewOpenMs,
          review_open_200_goal_ms: 1_500,
          review_open_200_note:
            'click -> multi-file diff editor tab with 200 files, real VS Code (code-server), scripts/panel-tour-review.ts',
        },
        null,
        2,
      ) + '\n',
    );
  }

  // --- 2. Merge: the folder's branch gets the task's commit ---------------------------------
  await runCommand(page, 'Open Off-Peak Tasks');
  await tour.panel();
  const headBefore = git('rev-parse', 'HEAD');
  await tour.click(first, 'merge-changes');
  await answerDialog(page, 'Merge');
  await tour.card(first).locator('[data-testid="merged"]').waitFor({ timeout: 30_000 });
  assert.notEqual(git('rev-parse', 'HEAD'), headBefore);
  assert.match(git('log', '-1', '--format=%s', 'main'), /^Merge offpeak\/review-tour-write-200-files-/);
  assert.equal(readFileSync(path.join(workspace, 'gen', 'file-7.txt'), 'utf8'), 'line 7\n');
  await tour.shot('merged');
  log(`Merge: main is now ${git('rev-parse', '--short', 'HEAD')} with the task's ${FILES} files`);

  // --- 3. Discard: the branch and the worktree are gone -------------------------------------
  const second = 'Review tour: a scratch file to discard';
  await tour.create(second, BYPASS_PERMISSIONS);
  await tour.phaseOf(second, 'Completed', 180_000);
  const branch = await until(
    "the second task's branch",
    () => git('branch', '--list', 'offpeak/review-tour-a-scratch*').replace(/^[*+ ]+/, '') || undefined,
  );
  await tour.click(second, 'discard-changes');
  await answerDialog(page, 'Discard Changes');
  await tour.card(second).locator('[data-testid="discarded"]').waitFor({ timeout: 30_000 });
  // It says what it removed: the worktree and the branch were both there.
  await tour.frame
    .locator('[data-testid="message"]', { hasText: `Removed the worktree` })
    .filter({ hasText: `and the branch ${branch}.` })
    .waitFor({ timeout: 10_000 });
  assert.equal(git('branch', '--list', branch), '', 'the branch is gone');
  assert.ok(!existsSync(path.join(workspace, 'scratch.txt')));
  await tour.shot('discarded');
  log(`Discard: ${branch} and its worktree are gone`);
});
