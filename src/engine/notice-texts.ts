// What a window's toast and its OS notification say about a notice (src/engine/task-notices.ts),
// vscode-free: a result in its outcome's words (src/core/outcome.ts, docs/flows.md#outcomes), the same
// as the card, History and the away notification. The title and the failure reason go in as plain text.
import { plainNotificationText } from '../core/untrusted-text';
import { refusalSentence, type TaskNotice } from './task-notices';

export type ResultNotice = Exclude<TaskNotice, { kind: 'input-needed' }>;

/** The toast of a result: its text and how loud it is (a refusal or a failed check is a warning). */
export function resultToastText(notice: ResultNotice): { text: string; severity: 'info' | 'warning' | 'error' } {
  const title = plainNotificationText(notice.title, 80);
  const denied = refusalSentence(notice.refusals);
  if (notice.kind === 'failed')
    return {
      text: `Off-Peak task "${title}" failed: ${plainNotificationText(notice.reason)}${denied ? ` (${denied})` : ''}`,
      severity: 'error',
    };
  const { outcome } = notice;
  // "… completed." reads as a sentence; "…: ready for review · checks pass." and "…: check failed after 2 rounds." name the state.
  const said = outcome.kind === 'completed' ? ` ${outcome.short}` : `: ${outcome.short}`;
  return {
    text: `Off-Peak task "${title}"${said}${denied ? `; ${denied}` : ''}.`,
    severity: outcome.tone === 'failure' || denied ? 'warning' : 'info',
  };
}

/** The OS notification's words for a notice (the same facts as the window's toast). */
export function desktopText(notice: TaskNotice): { title: string; body: string } {
  switch (notice.kind) {
    case 'input-needed':
      return { title: 'Off-Peak: a task needs input', body: `"${notice.title}" asks before running ${notice.ask.tool}.` };
    case 'completed':
      return { title: `Off-Peak: ${notice.outcome.short}`, body: `"${notice.title}": ${notice.outcome.short}.` };
    case 'failed':
      return { title: 'Off-Peak: task failed', body: `"${notice.title}" failed.` };
  }
}
