// What a window's task runtime reports of its segments (TaskRuntimeOptions.onEvent): the engine
// words them in the Output channel and passes them on to notices; tests and benches read them.
import type { AskAnsweredBy, AskDecision, PendingAsk } from '../questions/asks';
import type { SegmentOutcome } from './segment-outcome';

export type RuntimeEvent =
  /** `startup`: when its start-up steps ended (the bench's breakdown); `at`: when its start was recorded. */
  | {
      type: 'segment-started';
      taskId: string;
      ticketId: string;
      sessionId: string;
      resume: boolean;
      pid: number | undefined;
      at: number;
      startup?: SegmentStartup;
    }
  | { type: 'admitted'; taskId: string; ticketId: string; at: number }
  | { type: 'holding'; taskId: string; ticketId: string; waitMs: number; at: number }
  /** The segment's model requests cannot reach the gateway since `since` and are held (null: they can again). */
  | { type: 'gateway-unreachable'; taskId: string; ticketId: string; since: number | null; at: number }
  /** The account's usage limit holds the segment until `resetAt` (null: lifted); `park`: the task parks until then. */
  | { type: 'usage-limit'; taskId: string; ticketId: string; resetAt: number | null; park: boolean; at: number }
  /** The agent asks before an edit or a command; answer with `TaskRuntime.answerAsk` (or its terminal). */
  | { type: 'input-needed'; taskId: string; ask: PendingAsk }
  | { type: 'input-answered'; taskId: string; ask: PendingAsk; decision: AskDecision; by: AskAnsweredBy; at: number }
  | { type: 'segment-ended'; taskId: string; ticketId: string; outcome: SegmentOutcome; at: number };

/** Epoch ms: the dispatch reached the runtime, the workplace was ready, the agent process was spawned. */
export type SegmentStartup = Record<'dispatchedAt' | 'workplaceAt' | 'spawnedAt', number>;
