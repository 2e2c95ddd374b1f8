// The Off-Peak Tasks panel: the create area, cards in sections (Running / Needs input / Queued /
// Paused / Finished), and the 0/1-row-per-task History. Every text from a task, the gateway or
// the agent is rendered as plain text (JSX escapes it).
import { useCallback, useContext, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { PanelState } from '../src/protocol/webview';
import type { Act } from './act';
import { bannerOutlived, type AnswerOwner } from './ask-input';
import { AvailabilityHint, GatewayHealth, PlanLock, SetupLine } from './banners';
import { confirmationSeen, failureOutlived, gatewayUnreachableShown, type ActionFailure } from './banner-rules';
import { Card } from './card';
import { availabilityText, groupCards, offPeakOpeningText, SECTIONS, ticks } from './format';
import type { HostChannel } from './host-channel';
import { History } from './history';
import { Schedules } from './schedules';
import { useSameList, useShowingResults, useTickingNow } from './hooks';
import { AccountBar } from './account-bar';
import { ResultsSummaryBar, type CardFilter } from './summary';
import { afterChoicesOf } from './after-field';
import { TaskForm } from './task-form';
import { ViewStateContext } from './view-state';
import { cardSummaryFacts, summaryOfTasks } from '../src/panel/task-summary';
import { machineTimeZone } from '../src/core/zoned-time';

/** Cards a section shows at first, and each "Show more" adds. */
const PAGE = 50;

export function App({
  channel,
  state,
  focusTick,
  error,
  onError,
}: {
  channel: HostChannel;
  state: PanelState | undefined;
  focusTick: number;
  error: string | undefined;
  onError(message: string | undefined): void;
}) {
  const now = useTickingNow(state);
  const [formOpen, setFormOpen] = useState(false);
  /** How many cards each section shows; the rest wait behind "Show more" (a panel with 1000 tasks stays quick). */
  const [shown, setShown] = useState<Partial<Record<string, number>>>({});
  // An answer's banner names its task's state then and goes at that task's next change.
  const [message, setMessage] = useState<{ text: string; owner?: AnswerOwner }>();
  const showMessage = useCallback(
    (text: string | undefined, owner?: AnswerOwner) => setMessage(text === undefined ? undefined : { text, owner }),
    [],
  );
  const messageOutlived = message?.owner !== undefined && state !== undefined && bannerOutlived(message.owner, state.tasks);
  // A confirmation with no task to follow goes once seen (the panel was hidden after it showed).
  const confirmationGone =
    message !== undefined && message.owner === undefined && state !== undefined && confirmationSeen(state.visible ?? true);
  useEffect(() => {
    if (messageOutlived || confirmationGone) setMessage(undefined);
  }, [messageOutlived, confirmationGone]);
  // An action's failure banner goes once it is no longer true (the gateway answers again).
  const [failure, setFailure] = useState<ActionFailure>();
  const failureGone = error !== undefined && failure !== undefined && state !== undefined && failureOutlived(failure, state.availability);
  useEffect(() => {
    if (!failureGone) return;
    setFailure(undefined);
    onError(undefined);
  }, [failureGone, onError]);
  /** A part of the summary the user clicked: only its cards show. */
  const [filter, setFilter] = useState<CardFilter>();
  useEffect(() => {
    if (focusTick > 0) setFormOpen(true);
  }, [focusTick]);
  const act: Act = useCallback(
    <T,>(work: Promise<T>) =>
      work.then(
        (result) => {
          onError(undefined);
          return result;
        },
        (e: Error & { code?: string }) => {
          setFailure({ at: Date.now(), code: e.code });
          onError(e.message);
          return undefined;
        },
      ),
    [onError],
  );
  // The scroll position is kept across a window reload: saved as it changes, restored once the
  // first snapshot has rendered the cards it was measured on.
  const viewState = useContext(ViewStateContext);
  const restored = useRef(false);
  useEffect(() => {
    if (!viewState || restored.current || !state) return;
    restored.current = true;
    if (viewState.scrollY > 0) requestAnimationFrame(() => window.scrollTo(0, viewState.scrollY));
    viewState.keepOnly(new Set(state.tasks.map((t) => t.id)));
    let frame = 0;
    const onScroll = () => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => viewState.setScrollY(window.scrollY));
    };
    window.addEventListener('scroll', onScroll, { passive: true });
  }, [state !== undefined]);
  // A countdown that reaches its end asks the host to look again (the host also re-checks on its own).
  const nextTakeAt = state?.availability.nextTakeAt;
  useEffect(() => {
    if (nextTakeAt === undefined) return;
    const wait = Math.max(0, nextTakeAt - Date.now()) + 500;
    const timer = setTimeout(() => void channel.request('refresh', {}).catch(() => undefined), wait);
    return () => clearTimeout(timer);
  }, [nextTakeAt, channel]);

  // Once per snapshot, not on every tick of the clock (the panel re-renders each second).
  const groups = useMemo(() => groupCards(state?.tasks ?? []), [state?.tasks]);
  const models = useSameList(state?.models);
  const onScreenUnseen = SECTIONS.flatMap(({ name }) => groups[name].slice(0, shown[name] ?? PAGE))
    .filter((c) => c.unseen)
    .map((c) => c.id);
  useShowingResults(onScreenUnseen, channel, state?.visible ?? true);
  const summary = useMemo(
    () => summaryOfTasks(state?.tasks ?? [], cardSummaryFacts, state?.lastSeenAt ?? null),
    [state?.tasks, state?.lastSeenAt],
  );
  // A filter whose summary is gone (the panel was hidden, the results are old news) lets every card show again.
  const activeFilter = summary && filter && summary.parts.some((p) => p.filter === filter.filter) ? filter : undefined;

  // Saving a key checks it with the gateway: the answer (accepted, refused, unreachable) is shown.
  const setApiKey = () => void act(channel.request('setApiKey', {})).then((r) => r?.check && showMessage(r.check.text));

  if (!state)
    return (
      <main class="loading" aria-busy="true">
        <vscode-progress-ring />
      </main>
    );
  const a = state.availability;
  // The host's zone: schedules run on its clock (this webview may be on another machine).
  const zoneText = state.timeZone ?? machineTimeZone();
  const hasTasks = state.tasks.length > 0;
  const showForm = a.kind !== 'hidden' && (!hasTasks || formOpen);
  // What every card and the Schedules list take from the panel alike.
  const shared = { models, defaultModelText: state.setup?.defaultModelText, act, channel, onError };
  return (
    <main>
      {state.notice && (
        <div class="notice" role="alert" data-testid="notice">
          {state.notice}
        </div>
      )}
      {error && (
        <div class="error" role="alert" data-testid="error">
          <span class="codicon codicon-error" aria-hidden="true" /> {error}
        </div>
      )}
      {message && !messageOutlived && (
        <div class="notice" role="status" data-testid="message">
          {message.text}
        </div>
      )}
      {!state.hasApiKey && (
        <div class="notice" data-testid="no-key">
          No gateway API key is set.{' '}
          <vscode-button secondary data-testid="set-key" onClick={setApiKey}>
            Set API key…
          </vscode-button>
        </div>
      )}
      {state.setup && <SetupLine setup={state.setup} now={now} />}
      {state.account && <AccountBar account={state.account} />}
      {summary && <ResultsSummaryBar summary={summary} now={now} active={activeFilter} onFilter={setFilter} />}
      {(a.kind !== 'unreachable' || gatewayUnreachableShown(a, state.hasApiKey)) && (
        <GatewayHealth availability={a} now={now} hasQueued={groups.queued.length > 0} onSetApiKey={setApiKey} />
      )}
      {a.kind === 'hidden' ? (
        <div class="notice" data-testid="not-exposed" role="status">
          {a.reason}
          {hasTasks ? ' Your existing tasks are listed below.' : ''}
        </div>
      ) : (
        <div class="create-area" data-testid="create-area">
          {a.kind === 'plan_locked' && <PlanLock availability={a} />}
          {!showForm && (
            <div class="toolbar">
              <button type="button" class="primary" data-testid="new-task" onClick={() => setFormOpen(true)} aria-expanded="false">
                <span class="codicon codicon-add" aria-hidden="true" /> New task
              </button>
              <AvailabilityHint availability={a} now={now} hasApiKey={state.hasApiKey} />
            </div>
          )}
          {showForm && (
            <TaskForm
              workspaces={state.workspaces}
              afterChoices={afterChoicesOf(state.tasks, now)}
              models={models}
              defaultModelText={state.setup?.defaultModelText}
              unansweredText={state.setup?.unansweredText}
              blockedText={!state.hasApiKey ? 'Set an API key first.' : availabilityText(a, now)}
              focusTick={focusTick + (formOpen ? 1 : 0)}
              submit={async (input) => {
                const { taskId } = await channel.request('createTask', { input }).catch((e: Error & { code?: string }) => {
                  setFailure({ at: Date.now(), code: e.code }); // the form shows the error; its banner goes once no longer true
                  throw e;
                });
                if (taskId === null) return false; // not confirmed: keep what was typed
                setFormOpen(false);
              }}
              zoneText={zoneText}
              submitSchedule={async (draft, rule) => {
                const { scheduleId } = await channel.request('createSchedule', { draft, rule });
                if (scheduleId === null) return false; // not confirmed: keep what was typed
                setFormOpen(false);
              }}
              onError={onError}
              onDone={hasTasks ? () => setFormOpen(false) : undefined}
            />
          )}
        </div>
      )}
      {SECTIONS.map(({ name, label, icon }) => {
        const cards = activeFilter ? groups[name].filter((c) => activeFilter.taskIds.has(c.id)) : groups[name];
        if (cards.length === 0) return null;
        const limit = shown[name] ?? PAGE;
        return (
          <section key={name} class={`section ${name}`} aria-labelledby={`section-${name}`} data-testid={`section-${name}`}>
            <h2 id={`section-${name}`}>
              <span class={`codicon codicon-${icon}`} aria-hidden="true" /> {label}{' '}
              <vscode-badge variant="counter">{cards.length}</vscode-badge>
            </h2>
            {name === 'queued' && a.offPeakOpensAt !== undefined && (
              <p class="window-opens" data-testid="window-opens">
                <span class="codicon codicon-clock" aria-hidden="true" /> {offPeakOpeningText(a.offPeakOpensAt, now)}
              </p>
            )}
            <ul class="cards" role="list">
              {cards.slice(0, limit).map((t) => (
                <Card key={t.id} card={t} isNew={t.unseen} now={ticks(t) ? now : 0} {...shared} onMessage={showMessage} />
              ))}
            </ul>
            {cards.length > limit && (
              <button type="button" class="more" data-testid="show-more" onClick={() => setShown({ ...shown, [name]: limit + PAGE })}>
                Show {Math.min(PAGE, cards.length - limit)} more of {cards.length - limit}
              </button>
            )}
          </section>
        );
      })}
      {!hasTasks && a.kind !== 'hidden' && (
        <p class="empty">
          No tasks yet.{' '}
          <button
            type="button"
            class="link"
            data-testid="open-walkthrough"
            onClick={() => void act(channel.request('openWalkthrough', {}))}
          >
            New here? Open the first-run walkthrough
          </button>
        </p>
      )}
      <Schedules schedules={state.schedules ?? []} workspaces={state.workspaces} zoneText={zoneText} {...shared} />
      <History state={state} now={now} act={act} channel={channel} />
    </main>
  );
}
