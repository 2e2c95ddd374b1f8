// What a task was refused, and every question it asked (docs/flows.md#questions-park-the-task):
// the "N actions denied (M automatically)" mark on cards and History rows, and the expanded
// card's list of questions with the answer, who or what gave it, and when. The tool and the
// question are untrusted model text, rendered as text.
import { useEffect, useState } from 'preact/hooks';
import type { AllowedNotRunView, QuestionView, RefusalCount } from '../src/protocol/webview';
import type { HostChannel } from './host-channel';
import { formatTime, questionAnswerText as answerText, refusalText } from './format';

/** The mark beside a card's or History row's state: shown only when something was denied. */
export function RefusalMark({ refusals }: { refusals: RefusalCount | undefined }) {
  const text = refusalText(refusals);
  if (!text) return null;
  return (
    <span
      class="refusal-mark"
      data-testid="refusals"
      title="Permission questions denied (by you, or automatically when nobody answered in time); details in the expanded card"
    >
      <span class="codicon codicon-shield" aria-hidden="true" /> {text}
    </span>
  );
}

/**
 * A completed task whose action the user allowed after it parked never ran (the resumed session
 * did not make that call again): said on the card, with Follow up to ask for it again.
 */
export function AllowedNotRunLine({ notRun, onFollowUp }: { notRun: AllowedNotRunView | undefined; onFollowUp?: () => void }) {
  if (!notRun) return null;
  return (
    <div class="allowed-not-run" data-testid="allowed-not-run">
      <span class="codicon codicon-warning" aria-hidden="true" /> The action you allowed did not run: {notRun.tool}: {notRun.summary}. The
      agent finished without making that call again.
      {onFollowUp && (
        <>
          {' '}
          <button type="button" class="link" data-testid="allowed-not-run-follow-up" onClick={onFollowUp}>
            Follow up…
          </button>
        </>
      )}
    </div>
  );
}

/** The History row's mark for the same: succeeded, but not what was allowed. */
export function AllowedNotRunMark({ notRun }: { notRun: AllowedNotRunView | undefined }) {
  if (!notRun) return null;
  return (
    <span
      class="refusal-mark"
      data-testid="history-allowed-not-run"
      title={`The action you allowed did not run: ${notRun.tool}: ${notRun.summary}`}
    >
      <span class="codicon codicon-warning" aria-hidden="true" /> Allowed action did not run
    </span>
  );
}

/** Two marks show the same thing when they count the same. */
export function sameRefusals(a: RefusalCount | undefined, b: RefusalCount | undefined): boolean {
  return a?.denied === b?.denied && a?.automatic === b?.automatic;
}

/** The expanded card's questions, loaded when it opens and again when the count of questions may have changed. */
export function QuestionList({ taskId, channel, reloadKey }: { taskId: string; channel: HostChannel; reloadKey: string }) {
  const [questions, setQuestions] = useState<QuestionView[] | undefined>();
  useEffect(() => {
    let live = true;
    channel.request('questions', { taskId }).then(
      (r) => live && setQuestions(r.questions),
      () => live && setQuestions([]),
    );
    return () => {
      live = false;
    };
  }, [taskId, reloadKey]);
  if (!questions || questions.length === 0) return null;
  return (
    <div class="questions" data-testid="questions">
      <p class="questions-caption">Permission questions</p>
      <ul role="list">
        {questions.map((q) => (
          <li key={q.askId} data-testid="question" data-decision={q.decision ?? 'open'} data-answered-by={q.answeredBy ?? ''}>
            <span class="ask-tool">{q.tool}</span>: <span data-testid="question-summary">{q.summary}</span>
            <span class="hint"> · asked {formatTime(q.askedAt)} · </span>
            <span data-testid="question-answer">{answerText(q)}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
