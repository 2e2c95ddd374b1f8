// The History section: one row per task that ran. The snapshot carries the first page; "Show
// more" and the filter box ask the host for pages of the task DB's and the archive's rows
// (docs/flows.md#archive).
import { CheckLine } from './check-line';
import { useEffect, useRef, useState } from 'preact/hooks';
import { HISTORY_PAGE_ROWS, type HistoryFilterView, type HistoryRowView, type PanelState } from '../src/protocol/webview';
import { ActionButton } from './action-button';
import type { Act } from './act';
import { formatDuration, formatTime, historyRowDuration } from './format';
import type { HostChannel } from './host-channel';
import { UsageTotal } from './card-extras-view';
import { AllowedNotRunMark, RefusalMark } from './questions';
import { ReviewButton } from './workplace';
import { PromptText } from './card';
import { FollowUpForm, FollowUpMark, SessionButtons } from './session-actions';
import { activeFilter, HistoryFilterBox } from './history-filter';

/** Rows fetched beyond the snapshot (more pages, or a filter's results). */
interface Loaded {
  rows: HistoryRowView[];
  total: number;
}

export function History({
  state,
  now,
  act,
  channel,
}: {
  state: Pick<PanelState, 'history' | 'historyTotal' | 'historyArchived'>;
  now: number;
  act: Act;
  channel: HostChannel;
}) {
  const [followingUp, setFollowingUp] = useState<string>();
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const toggle = (taskId: string) =>
    setExpanded((open) => (open.has(taskId) ? new Set([...open].filter((id) => id !== taskId)) : new Set([...open, taskId])));
  const [filter, setFilter] = useState<HistoryFilterView>({});
  const [loaded, setLoaded] = useState<Loaded>();
  const asked = activeFilter(filter);
  const askedKey = JSON.stringify(asked ?? null);
  // What the snapshot's first page is now: when it changes, pages fetched before are fetched again.
  const headKey = state.history.map((h) => `${h.taskId}:${h.status}`).join(',');
  const latest = useRef(0);
  const fetchPage = (offset: number, limit: number, prefix: HistoryRowView[]) => {
    const ticket = ++latest.current;
    void act(channel.request('historyPage', { offset, limit, ...(asked ? { filter: asked } : {}) })).then((page) => {
      if (page && ticket === latest.current) setLoaded({ rows: [...prefix, ...page.rows], total: page.total });
    });
  };
  useEffect(() => {
    if (!asked && !loaded) return;
    if (!asked && loaded && loaded.rows.length <= state.history.length) {
      setLoaded(undefined);
      return;
    }
    // Typing waits for a pause; the same number of rows is asked for again.
    const timer = setTimeout(() => fetchPage(0, Math.max(HISTORY_PAGE_ROWS, loaded?.rows.length ?? 0), []), asked ? 200 : 0);
    return () => clearTimeout(timer);
  }, [askedKey, headKey]);

  const rows = loaded?.rows ?? state.history;
  const total = loaded?.total ?? state.historyTotal ?? state.history.length;
  const more = loaded ? loaded.rows.length < loaded.total : total > state.history.length || (state.historyArchived ?? false);
  const showMore = () =>
    loaded
      ? fetchPage(loaded.rows.length, HISTORY_PAGE_ROWS, loaded.rows)
      : fetchPage(state.history.length, HISTORY_PAGE_ROWS, state.history);
  const hasAny = state.history.length > 0 || (state.historyArchived ?? false);
  return (
    <section class="section history" aria-labelledby="section-history" data-testid="history">
      <h2 id="section-history">
        <span class="codicon codicon-history" aria-hidden="true" /> History
      </h2>
      {hasAny && <HistoryFilterBox filter={filter} onChange={setFilter} />}
      {!hasAny && <p class="empty">Nothing has run yet.</p>}
      {hasAny && rows.length === 0 && asked && (
        <p class="empty" data-testid="history-no-match">
          No task matches.
        </p>
      )}
      <ul class="history-rows" role="list">
        {rows.map((h) => (
          <li class="history-row" key={h.taskId} data-testid={`history-${h.taskId}`}>
            <button
              type="button"
              class="icon expand"
              data-testid="history-expand"
              aria-expanded={expanded.has(h.taskId)}
              aria-controls={`history-details-${h.taskId}`}
              title={expanded.has(h.taskId) ? 'Hide the prompt' : 'Show the prompt and when it was triggered'}
              onClick={() => toggle(h.taskId)}
            >
              <span class={`codicon codicon-chevron-${expanded.has(h.taskId) ? 'down' : 'right'}`} aria-hidden="true" />
            </button>
            <span class="title" title={h.title}>
              {h.title}
            </span>
            <FollowUpMark title={h.followUpOfTitle} />
            {/* The outcome's label and icon (src/core/outcome.ts): the card's and the notifications' words. */}
            <span class={`status ${h.status} outcome-${h.outcome.tone}`} data-testid="history-status" data-outcome={h.outcome.kind}>
              <span class={`codicon codicon-${h.outcome.icon}`} aria-hidden="true" /> {h.outcome.label}
            </span>
            <RefusalMark refusals={h.refusals} />
            <AllowedNotRunMark notRun={h.allowedNotRun} />
            <span class="when">Triggered {formatTime(h.triggeredAt)}</span>
            <span class="duration" data-testid="history-duration">
              {formatDuration(historyRowDuration(h, now))}
            </span>
            <UsageTotal usage={h.usage} testid="history-usage" />
            {h.archived && (
              <span class="archived" data-testid="history-archived" title="In the history archive">
                Archived
              </span>
            )}
            <span class="actions">
              <SessionButtons
                taskId={h.taskId}
                openSession={h.sessionId !== null}
                followUp={h.sessionId !== null && h.status !== 'in_progress'}
                sessionLabel="Session"
                sessionTestId="session"
                act={act}
                channel={channel}
                onFollowUp={() => setFollowingUp(h.taskId)}
              />
              <ReviewButton taskId={h.taskId} show={h.reviewable ?? false} act={act} channel={channel} />
              {h.archived ? (
                // An archived task has no card: its Delete is here (asked first; its files go with it).
                <ActionButton
                  testid="delete-archived"
                  icon="trash"
                  label="Delete"
                  onClick={() =>
                    void act(channel.request('delete', { taskId: h.taskId })).then(
                      (r) => r?.done && fetchPage(0, Math.max(HISTORY_PAGE_ROWS, rows.length), []),
                    )
                  }
                />
              ) : (
                <ActionButton
                  testid="delete-history"
                  icon="close"
                  label="Remove"
                  onClick={() => void act(channel.request('deleteHistory', { taskId: h.taskId }))}
                />
              )}
            </span>
            <CheckLine check={h.check} />
            {expanded.has(h.taskId) && (
              <div class="details" id={`history-details-${h.taskId}`} data-testid="history-details">
                <PromptText prompt={h.prompt} />
                <div class="meta">
                  <span data-testid="history-triggered">Triggered {formatTime(h.triggeredAt)}</span>
                  <span>
                    {h.outcome.label} after {formatDuration(historyRowDuration(h, now))}
                  </span>
                </div>
                {h.failureReason && (
                  <div class="reason" data-testid="history-reason">
                    {h.failureReason}
                  </div>
                )}
              </div>
            )}
            {followingUp === h.taskId && (
              <FollowUpForm
                taskId={h.taskId}
                taskTitle={h.title}
                act={act}
                channel={channel}
                onMessage={() => undefined}
                onDone={() => setFollowingUp(undefined)}
              />
            )}
          </li>
        ))}
      </ul>
      {more && (
        <button type="button" class="more" data-testid="history-more" onClick={showMore}>
          {loaded || !state.historyArchived
            ? `Show ${Math.min(HISTORY_PAGE_ROWS, total - rows.length)} more of ${total - rows.length}`
            : 'Show older'}
        </button>
      )}
    </section>
  );
}
