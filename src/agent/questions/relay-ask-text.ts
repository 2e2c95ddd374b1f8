// What a question relayed from Claude Code's permission MCP server looks like in the task's
// terminal, and the deny messages the agent gets (docs/flows.md#what-a-question-shows).
import { indentedQuestionInput, questionHeadline } from '../../core/ask-input';
import type { PermissionRelayAnswer } from '../../protocol/permission-relay';
import type { AskAnsweredBy, PendingAsk } from './asks';

/** The question as the terminal shows it: its line in the question's style, the whole input indented, and what happens if nobody answers. */
export function relayQuestionText(ask: PendingAsk, secondsLeft: number): string {
  const unanswered =
    ask.onDeadline === 'park'
      ? `the task waits for the answer without holding capacity after ${secondsLeft} s`
      : `denied automatically in ${secondsLeft} s`;
  return `\n${questionHeadline(ask.tool)}\n${indentedQuestionInput(ask.input, '    ')}\n  [y/N] (type y or n, then Enter, here or answer in VS Code; ${unanswered}) `;
}

export const DENY_MESSAGES: Record<AskAnsweredBy, string> = {
  host: 'The user denied this action. Do not retry it; find another way or stop.',
  terminal: 'The user denied this action. Do not retry it; find another way or stop.',
  'other-window': 'The user denied this action. Do not retry it; find another way or stop.',
  stored: 'The user denied this action while the task waited for the answer. Do not retry it; find another way or stop.',
  timeout: 'Nobody answered the permission question in time, so it was denied. Do not retry the same action.',
  ended: 'The working segment ended before the question was answered.',
};

export const ENDED_ANSWER: PermissionRelayAnswer = { decision: 'deny', message: DENY_MESSAGES.ended };

export const ANSWERED_BY_TEXT: Record<AskAnsweredBy, string> = {
  host: ' (answered outside this terminal)',
  terminal: '',
  'other-window': ' (answered in another window)',
  stored: ' (your answer while the task waited)',
  timeout: ': nobody answered in time',
  ended: ': the segment ended',
};
