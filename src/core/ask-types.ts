// The shape of a permission question and its answer, as every layer sees it: the runtime that
// holds it (agent/questions/asks.ts), the service that answers a parked one, the panel's cards.

export type AskDecision = 'allow' | 'deny';
/**
 * Who answered: the host API (this window's panel or notification), the agent's terminal, another
 * window, nobody before the deadline, the user's stored answer to the parked question, or the segment ended.
 */
export type AskAnsweredBy = 'host' | 'terminal' | 'other-window' | 'timeout' | 'stored' | 'ended';
/** What an unanswered question does at its deadline (`offPeak.unansweredQuestion`). */
export type UnansweredQuestion = 'park' | 'deny';

export interface PendingAsk {
  id: string;
  taskId: string;
  /** The agent's tool name (e.g. `write_file`, `Bash`). */
  tool: string;
  /** What the agent wants to do, one line of plain text, maybe shortened (a headline, never enough to approve). Untrusted: the model wrote it. */
  summary: string;
  /**
   * The tool call's whole input as every surface that offers Allow shows it (never shortened;
   * control characters made visible). Untrusted (docs/flows.md#what-a-question-shows).
   */
  input: string;
  /** sha256 (hex) of `input`: an answer must carry it (an answer for another input is refused). */
  inputDigest: string;
  askedAt: number;
  /** Denied (or parked, see `onDeadline`) automatically at this time. */
  deadlineAt: number;
  /** What happens at the deadline. */
  onDeadline?: UnansweredQuestion;
  /** The tool call it asks about (tool and whole input), hashed: the same call has the same digest (a stored decision answers it). */
  callDigest?: string | null;
  /** The task parked on it at this time (no agent waits; any window may answer it). */
  parkedAt?: number;
  /** Held because its window closed (at `parkedAt`) while it was open; the task is queued, not parked. */
  interrupted?: boolean;
}

/** `input-mismatch`: the answer names another input than the question's (what was shown is not what would run). */
export type AnswerResult = 'accepted' | 'already-answered' | 'unknown' | 'input-mismatch';
