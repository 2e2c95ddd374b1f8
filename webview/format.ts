// Small display helpers for the panel (pure; unit-tested in Node).
import type { CardPhase, PanelState, TaskCard } from '../src/protocol/webview';

export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

export function formatTime(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

export function phaseLabel(card: Pick<TaskCard, 'phase' | 'queuePosition'>): string {
  const labels: Record<CardPhase, string> = {
    taking_ticket: 'Taking a ticket',
    in_queue: card.queuePosition != null ? `In queue · #${card.queuePosition}` : 'In queue',
    ready: 'Ready to start',
    paused: 'Paused',
    waiting_for_admission: 'Waiting for admission',
    running: 'Running',
    completed: 'Completed',
    failed: 'Failed',
    cancelled: 'Cancelled',
  };
  return labels[card.phase];
}

export const HISTORY_LABELS: Record<PanelState['history'][number]['status'], string> = {
  in_progress: 'In progress',
  succeeded: 'Succeeded',
  failure: 'Failure',
  skipped: 'Skipped',
};

export function availabilityText(a: PanelState['availability'], now: number): string | undefined {
  if (a.canCreate) return undefined;
  if (a.nextTakeAt && a.nextTakeAt > now) return `${a.reason ?? 'No tickets available'} · next at ${formatTime(a.nextTakeAt)}`;
  return a.reason ?? 'No tickets available right now';
}
