/**
 * How a segment ended (`SegmentOutcome`, docs/flows.md#segments), mapped from why it was stopped,
 * what its proxy saw and how the agent exited; and what a terminal view sees of a running segment.
 */
import type { AgentResult } from './agent-adapter';

/** What a terminal (VS Code Pseudoterminal adapter, a test, a log) sees of a running segment. */
export interface TerminalView {
  /** Output text as it arrives ('\n' line ends; a pty adapter converts to '\r\n'). */
  write(text: string): void;
  /** The segment ended; the view may show the outcome and stop accepting input. */
  end?(outcome: SegmentOutcome): void;
}

export type SegmentOutcome =
  /** The agent finished the task; `check`: how the task's check ended (docs/flows.md#checks). */
  | { kind: 'completed'; summary: string; exitCode: number | null; check?: { passed: boolean; round: number } }
  /** The gateway ended the segment (3102/3001): requeue, retake, resume later. */
  | { kind: 'segment-expired' }
  /** The user cancelled the task (our own state). */
  | { kind: 'cancelled' }
  /** The host stopped the segment (shutdown, restart): requeue, resume the same session. */
  | { kind: 'interrupted' }
  /** Nobody answered the agent's question in time: the task parks on it (docs/flows.md#questions-park-the-task). */
  | { kind: 'parked'; askId: string }
  /** The account's usage limit resets later than a hold is worth: the task waits for `resetAt` (docs/flows.md#usage-limits). */
  | { kind: 'usage-limited'; resetAt: number }
  | { kind: 'failed'; reason: string; exitCode: number | null };

/** Why the host stopped the agent (the first reason wins), or null when it ended by itself. */
export type StopReason = 'cancelled' | 'interrupted' | 'expired' | 'gateway-lost' | 'parked' | 'usage-limited';

/** All a segment's end is decided from. */
export interface SegmentEnd {
  stopReason: StopReason | null;
  parkedAskId: string | null;
  limitResetAt: number;
  /** The gateway refused the segment's ticket (its proxy's state is `expired`). */
  proxyExpired: boolean;
  /** Why the proxy gave up (an outage past its bound, an unusable model API), or null. */
  proxyFailure: string | null;
  /** What the agent reported. */
  result: AgentResult | undefined;
  /** Ctrl+C in the task's terminal. */
  interruptedByUser: boolean;
  /** The end of the agent's stderr. */
  stderrTail: string;
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The segment's outcome: the host's stop reason first, then the proxy's, then the agent's own result and exit. */
export function segmentOutcome(end: SegmentEnd): SegmentOutcome {
  const { stopReason, code, signal, result } = end;
  if (stopReason === 'cancelled') return { kind: 'cancelled' };
  if (stopReason === 'interrupted') return { kind: 'interrupted' };
  if (stopReason === 'parked' && end.parkedAskId) return { kind: 'parked', askId: end.parkedAskId };
  if (stopReason === 'usage-limited') return { kind: 'usage-limited', resetAt: end.limitResetAt };
  if (stopReason === 'expired' || end.proxyExpired) return { kind: 'segment-expired' };
  const lost = end.proxyFailure;
  if (lost !== null) return { kind: 'failed', reason: lost, exitCode: code };
  if (code === 0 && result?.ok) return { kind: 'completed', summary: result.summary, exitCode: code };
  let reason: string;
  if (end.interruptedByUser) reason = 'the agent was stopped with Ctrl+C in its terminal';
  else if (result && !result.ok) reason = result.error;
  else if (code === 0) reason = 'the agent exited without reporting a result';
  else if (signal) reason = `the agent was killed by ${signal}`;
  else reason = `the agent exited with code ${code}`;
  const tail = end.stderrTail.trim().split('\n').slice(-3).join(' | ');
  if (tail && !reason.includes(tail)) reason += ` (${tail})`;
  return { kind: 'failed', reason: reason.slice(0, 2_000), exitCode: code };
}
