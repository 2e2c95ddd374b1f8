/**
 * What a task's pull request says (docs/flows.md#pull-requests): the task's title, and a body with
 * the prompt (its first lines, the rest folded), the check and its result with rounds, what the
 * task spent, the files it changed, and a line saying an off-peak agent wrote it. The prompt and
 * file names are the user's and the agent's text: they go in as text, inside code fences where
 * markdown could make them something else.
 */
import type { SegmentUsage } from '../../core/types';
import { plainNotificationText } from '../../core/untrusted-text';
import type { ChangedFile, TaskCheck } from '../../store';
import type { ReviewFeedback } from './forge-api';

export interface PullRequestText {
  title: string;
  prompt: string;
  check: TaskCheck | undefined;
  usage: SegmentUsage | null;
  changes: readonly ChangedFile[] | null;
  /** The steps' titles when several tasks share the branch (a chain or follow-ups). */
  steps?: readonly string[];
}

const SHOWN_PROMPT_LINES = 6;
const SHOWN_FILES = 50;
export const OFF_PEAK_LINE = 'Written by an off-peak agent (Off-Peak Tasks); review it as you would any contribution.';

/** A fence longer than any run of backticks in the text, so the text cannot close it. */
function fenced(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}text\n${text}\n${fence}`;
}

const rounds = (n: number) => `${n} round${n === 1 ? '' : 's'}`;

function checkLine(check: TaskCheck | undefined): string {
  if (!check) return 'No check was set for this task.';
  const result =
    check.state === 'passed'
      ? `passed after ${rounds(Math.max(1, check.round))}`
      : check.state === 'failed'
        ? `failed after ${rounds(Math.max(1, check.round))}${check.exitCode !== null ? ` (exit code ${check.exitCode})` : ''}`
        : check.state === 'skipped'
          ? 'not run (the agent changed what it runs)'
          : 'not finished';
  return `Check \`${check.command.replace(/`/g, "'")}\`: ${result}.`;
}

function usageLine(usage: SegmentUsage | null): string {
  if (!usage) return 'Spent: not reported.';
  const tokens = usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
  return `Spent: ${tokens.toLocaleString('en-US')} tokens in ${usage.requests} model request${usage.requests === 1 ? '' : 's'}${usage.model ? ` (${usage.model})` : ''}.`;
}

export function pullRequestBody(text: PullRequestText): string {
  const lines = text.prompt.replace(/\r\n/g, '\n').trimEnd().split('\n');
  const shown = lines.slice(0, SHOWN_PROMPT_LINES).join('\n');
  const rest = lines.slice(SHOWN_PROMPT_LINES).join('\n');
  const parts = ['### Prompt', fenced(shown)];
  if (rest)
    parts.push(
      `<details><summary>The rest of the prompt (${lines.length - SHOWN_PROMPT_LINES} more lines)</summary>\n\n${fenced(rest)}\n\n</details>`,
    );
  if (text.steps && text.steps.length > 1)
    parts.push('### Steps', text.steps.map((s, i) => `${i + 1}. ${s.replace(/[\r\n]+/g, ' ')}`).join('\n'));
  parts.push('### Result', checkLine(text.check), usageLine(text.usage));
  const files = text.changes ?? [];
  if (files.length > 0) {
    const list = files
      .slice(0, SHOWN_FILES)
      .map((f) => `${f.status} ${f.path}${f.added !== null ? ` (+${f.added} -${f.removed ?? 0})` : ''}`)
      .join('\n');
    parts.push(
      `### Files changed (${files.length})`,
      fenced(files.length > SHOWN_FILES ? `${list}\n… and ${files.length - SHOWN_FILES} more` : list),
    );
  }
  parts.push('---', OFF_PEAK_LINE);
  return parts.join('\n\n');
}

/**
 * "Follow up from review": the follow-up's instructions, made of the review comments (each on one
 * plain line: the reviewers' text is untrusted) and the failing checks' names.
 */
export function reviewFollowUpPrompt(number: number, feedback: ReviewFeedback): string {
  const parts = [`Address the review of pull request #${number} in this branch.`];
  if (feedback.comments.length > 0)
    parts.push(
      'Review comments:',
      feedback.comments
        .map(
          (c) =>
            `- ${plainNotificationText(c.path, 300)}${c.line !== null ? `:${c.line}` : ''} (@${plainNotificationText(c.author, 80)}): ${plainNotificationText(c.body, 2_000)}`,
        )
        .join('\n'),
    );
  if (feedback.failingChecks.length > 0)
    parts.push(`Failing checks: ${feedback.failingChecks.map((n) => plainNotificationText(n, 200)).join(', ')}. Make them pass.`);
  return parts.join('\n\n');
}
