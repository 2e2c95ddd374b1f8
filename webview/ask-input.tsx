// The whole input of a permission question, beside its Allow (docs/flows.md#what-a-question-shows):
// never shortened; a long one scrolls inside a monospace block, each field in a bordered block of
// its own. Untrusted model text, rendered as text only.
import type { TaskCard } from '../src/protocol/webview';

/**
 * The fields of a question's input as the card shows them, one block each: the input has one line
 * per field (a newline inside a value is `⏎`), so a value wrapped on screen stays inside its block.
 */
export function askInputFields(input: string): string[] {
  return input.split('\n');
}

export function AskInput({ input }: { input: string }) {
  const fields = askInputFields(input);
  const lines = fields.length;
  return (
    <div class="ask-input-block">
      <pre
        class="ask-input"
        data-testid="ask-input"
        tabIndex={0}
        aria-label={`The whole input (${lines} field${lines === 1 ? '' : 's'}, ${input.length} characters)`}
      >
        {fields.map((field, i) => (
          <span key={i} class="ask-field" data-testid="ask-field">
            {field}
          </span>
        ))}
      </pre>
      {(lines > 12 || input.length > 600) && (
        <p class="hint" data-testid="ask-input-size">
          {lines} fields, {input.length} characters: scroll to read all of it before you allow it.
        </p>
      )}
    </div>
  );
}

/**
 * The banner an answer leaves ("Allowed: …") belongs to the state its task was in when the
 * question was shown; it goes at the next change of that task (another phase or status, a new
 * question, the card gone) rather than staying through later states.
 */
export interface AnswerOwner {
  taskId: string;
  /** The task's phase and status when the question was shown, and the question answered. */
  phase: TaskCard['phase'];
  status: TaskCard['status'];
  askId: string;
}

export function bannerOutlived(owner: AnswerOwner, cards: readonly Pick<TaskCard, 'id' | 'phase' | 'status' | 'ask'>[]): boolean {
  const card = cards.find((c) => c.id === owner.taskId);
  if (!card) return true;
  if (card.status !== owner.status || card.phase !== owner.phase) return true;
  // The answered question leaving the card is the answer taking effect; a new one is news.
  return card.ask !== null && card.ask.id !== owner.askId;
}
