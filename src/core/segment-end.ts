// How a segment's end reads everywhere it is shown (the agent's own output, the task's terminal):
// an off-peak segment ending is the normal course of a long task, never an error.

/** What the ticket proxy's refusal of a model call after the segment ended says (and agents recognise). */
export const SEGMENT_END_MARK = 'off-peak segment ended';

/** Whether an agent's error text is the ticket proxy saying the segment ended. */
export function isSegmentEndError(text: string): boolean {
  return text.includes(SEGMENT_END_MARK);
}

/** "Segment 1 ended (time limit); the task resumes with a new ticket" (no number when unknown). */
export function segmentEndedText(segmentNumber?: number): string {
  return `Segment${segmentNumber !== undefined ? ` ${segmentNumber}` : ''} ended (time limit); the task resumes with a new ticket`;
}
