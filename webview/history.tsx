// The History section: one row per task that ran.
import { useState } from 'preact/hooks';
import type { PanelState } from '../src/protocol/webview';
import { ActionButton } from './action-button';
import type { Act } from './act';
import { formatDuration, formatTime, HISTORY_LABELS } from './format';
import type { HostChannel } from './host-channel';
import { UsageTotal } from './card-extras-view';
import { RefusalMark } from './questions';
import { ReviewButton } from './workplace';
import { FollowUpForm, FollowUpMark, SessionButtons } from './session-actions';

/** The coloured icon beside a History status (the text itself stays in the readable foreground). */
const HISTORY_ICONS: Partial<Record<PanelState['history'][number]['status'], string>> = { succeeded: 'pass-filled', failure: 'error' };

export function History({ history, act, channel }: { history: PanelState['history']; act: Act; channel: HostChannel }) {
  const [followingUp, setFollowingUp] = useState<string>();
  return (
    <section class="section history" aria-labelledby="section-history" data-testid="history">
      <h2 id="section-history"><span class="codicon codicon-history" aria-hidden="true" /> History</h2>
      {history.length === 0 && <p class="empty">Nothing has run yet.</p>}
      <ul class="history-rows" role="list">
        {history.map((h) => (
          <li class="history-row" key={h.taskId} data-testid={`history-${h.taskId}`}>
            <span class="title" title={h.title}>{h.title}</span>
            <FollowUpMark title={h.followUpOfTitle} />
            <span class={`status ${h.status}`} data-testid="history-status">
              {HISTORY_ICONS[h.status] && <><span class={`codicon codicon-${HISTORY_ICONS[h.status]}`} aria-hidden="true" /> </>}
              {HISTORY_LABELS[h.status]}
            </span>
            <RefusalMark refusals={h.refusals} />
            <span class="when">Triggered {formatTime(h.triggeredAt)}</span>
            <span class="duration">{formatDuration(h.durationMs)}</span>
            <UsageTotal usage={h.usage} testid="history-usage" />
            <span class="actions">
              <SessionButtons taskId={h.taskId} openSession={h.sessionId !== null} followUp={h.sessionId !== null && h.status !== 'in_progress'} sessionLabel="Session" sessionTestId="session" act={act} channel={channel} onFollowUp={() => setFollowingUp(h.taskId)} />
              <ReviewButton taskId={h.taskId} show={h.reviewable ?? false} act={act} channel={channel} />
              <ActionButton testid="delete-history" icon="close" label="Remove" onClick={() => void act(channel.request('deleteHistory', { taskId: h.taskId }))} />
            </span>
            {followingUp === h.taskId && <FollowUpForm taskId={h.taskId} taskTitle={h.title} act={act} channel={channel} onMessage={() => undefined} onDone={() => setFollowingUp(undefined)} />}
          </li>
        ))}
      </ul>
    </section>
  );
}
