// The agent's question on a card, with Allow / Deny.
import { useState } from 'preact/hooks';
import type { CardAsk, PanelParams } from '../src/protocol/webview';
import type { Act } from './act';
import { AskInput } from './ask-input';
import { answerOutcomeText, askDeadlineText } from './format';
import type { HostChannel } from './host-channel';

/** The agent's question (untrusted model text, rendered as text) with Allow / Deny. */
export function AskPrompt({
  ask,
  taskId,
  now,
  act,
  channel,
  onMessage,
}: {
  ask: CardAsk;
  taskId: string;
  now: number;
  act: Act;
  channel: HostChannel;
  onMessage(message: string | undefined): void;
}) {
  const [busy, setBusy] = useState(false);
  const answer = (decision: PanelParams<'answerAsk'>['decision']) => {
    setBusy(true);
    // The answer names the input this card shows: one for another input is refused.
    void act(channel.request('answerAsk', { taskId, askId: ask.id, decision, inputDigest: ask.inputDigest })).then((r) => {
      setBusy(false);
      if (r) onMessage(answerOutcomeText(decision, r.outcome, ask.tool, ask.parkedAt !== undefined));
    });
  };
  const questionId = `ask-${ask.id}`;
  return (
    <div class="ask" role="group" aria-labelledby={questionId} data-testid="ask">
      <span class="codicon codicon-question" aria-hidden="true" />
      <div class="ask-body">
        <p class="ask-question" id={questionId}>
          <span class="ask-tool" data-testid="ask-tool">
            {ask.tool}
          </span>
          : <span data-testid="ask-question">{ask.question}</span>
        </p>
        <AskInput input={ask.input} />
        <p class="hint" data-testid="ask-deadline">
          {askDeadlineText(ask, now || Date.now())}
        </p>
      </div>
      <span class="ask-buttons">
        <vscode-button data-testid="ask-allow" disabled={busy} onClick={() => answer('allow')}>
          Allow
        </vscode-button>
        <vscode-button secondary data-testid="ask-deny" disabled={busy} onClick={() => answer('deny')}>
          Deny
        </vscode-button>
      </span>
    </div>
  );
}
