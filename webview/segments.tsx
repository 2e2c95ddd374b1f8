// The expanded card's table of tickets and segments.
import type { SegmentView } from '../src/protocol/webview';
import { SegmentUsageCell } from './card-extras-view';
import { END_REASON_LABELS, formatTime } from './format';

export function Segments({ segments }: { segments: SegmentView[] | undefined }) {
  if (!segments) return <p class="hint">Loading segments…</p>;
  if (segments.length === 0) return <p class="hint">No ticket yet.</p>;
  const time = (t: number | null) => (t === null ? '—' : formatTime(t));
  return (
    <div class="segments-scroll">
      <table class="segments" data-testid="segments">
        <caption>Tickets and segments</caption>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">End reason</th>
            <th scope="col">Queued</th>
            <th scope="col">Ready</th>
            <th scope="col">Admitted</th>
            <th scope="col">Ended</th>
            <th scope="col">Tokens</th>
          </tr>
        </thead>
        <tbody>
          {segments.map((s) => (
            <tr key={s.ticketId} data-testid="segment">
              <td>{s.ordinal}</td>
              {/* The reason comes first: in a narrow panel the times are what scrolls out of view. */}
              <td data-testid="end-reason">{s.endReason ? (END_REASON_LABELS[s.endReason] ?? s.endReason) : s.serverState}</td>
              <td>{time(s.queuedAt)}</td>
              <td>{time(s.readyAt)}</td>
              <td>{time(s.admittedAt)}</td>
              <td>{time(s.endedAt)}</td>
              <SegmentUsageCell usage={s.usage} />
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
