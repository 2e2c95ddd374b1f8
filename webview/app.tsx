// The Off-Peak Tasks panel: the create area, cards in sections (Running / Needs input / Queued /
// Paused / Finished), and the 0/1-row-per-task History. Every text from a task, the gateway or
// the agent is rendered as plain text (JSX escapes it).
import { memo } from 'preact/compat';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { AvailabilityView, CardAsk, CreateTaskForm, PanelParams, PanelState, SegmentView, TaskCard } from '../src/protocol/webview';
import type { HostChannel } from './host-channel';
import { FollowUpForm, FollowUpMark, SessionButtons } from './session-actions';
import { OwnBranchToggle, ReviewButton, WorkplaceBlock } from './workplace';
import {
  answerOutcomeText,
  askDeadlineText,
  availabilityText,
  END_REASON_LABELS,
  formatAgo,
  formatDuration,
  formatTime,
  groupCards,
  HISTORY_LABELS,
  offPeakOpeningText,
  PHASE_ICONS,
  phaseLabel,
  SECTIONS,
  ticks,
} from './format';

const PERMISSION_MODE_CHOICES: { value: CreateTaskForm['permissionMode']; label: string; detail: string }[] = [
  { value: 'default', label: 'Ask before edits and commands', detail: 'The agent asks before it changes a file or runs a command; an ask nobody answers is denied after the configured time.' },
  { value: 'acceptEdits', label: 'Accept edits', detail: 'File edits in the workspace go ahead without asking; commands still ask.' },
  { value: 'plan', label: 'Plan only (read-only)', detail: 'The agent reads and plans but changes nothing.' },
  { value: 'bypassPermissions', label: 'Bypass permissions', detail: 'Edits and commands run without asking. Use only in a workspace you can restore.' },
];
const THOUGHT_LEVELS = ['', 'low', 'medium', 'high'];
/** Cards a section shows at first, and each "Show more" adds. */
const PAGE = 50;

type Value = { value: string };
const valueOf = (e: Event): string => (e.currentTarget as unknown as Value).value ?? '';

export type Act = <T>(work: Promise<T>) => Promise<T | undefined>;

/** `state.now` advanced by the time since the snapshot arrived, every second. */
function useTickingNow(state: PanelState | undefined): number {
  const [offset] = useState(() => ({ receivedAt: Date.now(), base: state?.now ?? Date.now() }));
  const [now, setNow] = useState(state?.now ?? Date.now());
  useEffect(() => {
    if (!state) return;
    offset.receivedAt = Date.now();
    offset.base = state.now;
    setNow(state.now);
  }, [state?.version]);
  useEffect(() => {
    const timer = setInterval(() => setNow(offset.base + (Date.now() - offset.receivedAt)), 1000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

/** Whether the page is on screen (the browser tab of code-server, or the window, may be hidden). */
function usePageVisible(): boolean {
  const [visible, setVisible] = useState(() => document.visibilityState === 'visible');
  useEffect(() => {
    const listener = () => setVisible(document.visibilityState === 'visible');
    document.addEventListener('visibilitychange', listener);
    return () => document.removeEventListener('visibilitychange', listener);
  }, []);
  return visible;
}

/**
 * Unseen results: while the panel is visible, the unseen cards it lists are reported seen (so the
 * count and the marks go in every window), and keep their "New" mark here until the panel is
 * hidden, so the user still sees which ones are new.
 */
function useNewMarks(onScreenUnseen: readonly string[], channel: HostChannel, shownByVsCode: boolean): ReadonlySet<string> {
  const visible = usePageVisible() && shownByVsCode;
  const [held, setHeld] = useState<ReadonlySet<string>>(() => new Set());
  const key = onScreenUnseen.join('\n');
  useEffect(() => {
    if (!visible) {
      if (held.size > 0) setHeld(new Set());
      return;
    }
    if (onScreenUnseen.length === 0) return;
    setHeld((before) => new Set([...before, ...onScreenUnseen]));
    void channel.request('markSeen', { taskIds: onScreenUnseen.slice(0, 1000) }).catch(() => undefined);
  }, [visible, key, channel]);
  return held;
}

export function App({ channel, state, focusTick, error, onError }: {
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
  const [message, setMessage] = useState<string>();
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
        (e: Error) => {
          onError(e.message);
          return undefined;
        },
      ),
    [onError],
  );
  // A countdown that reaches its end asks the host to look again (the host also re-checks on its own).
  const nextTakeAt = state?.availability.nextTakeAt;
  useEffect(() => {
    if (nextTakeAt === undefined) return;
    const wait = Math.max(0, nextTakeAt - Date.now()) + 500;
    const timer = setTimeout(() => void channel.request('refresh', {}).catch(() => undefined), wait);
    return () => clearTimeout(timer);
  }, [nextTakeAt, channel]);

  const groups = groupCards(state?.tasks ?? []);
  const onScreenUnseen = SECTIONS.flatMap(({ name }) => groups[name].slice(0, shown[name] ?? PAGE)).filter((c) => c.unseen).map((c) => c.id);
  const held = useNewMarks(onScreenUnseen, channel, state?.visible ?? true);

  if (!state) return <main class="loading" aria-busy="true"><vscode-progress-ring /></main>;
  const a = state.availability;
  const hasTasks = state.tasks.length > 0;
  const showForm = a.kind !== 'hidden' && (!hasTasks || formOpen);
  return (
    <main>
      {state.notice && <div class="notice" role="alert" data-testid="notice">{state.notice}</div>}
      {error && <div class="error" role="alert" data-testid="error"><span class="codicon codicon-error" aria-hidden="true" /> {error}</div>}
      {message && <div class="notice" role="status" data-testid="message">{message}</div>}
      {!state.hasApiKey && (
        <div class="notice" data-testid="no-key">
          No gateway API key is set. <vscode-button secondary onClick={() => void act(channel.request('setApiKey', {}))}>Set API key…</vscode-button>
        </div>
      )}
      <GatewayHealth availability={a} now={now} hasQueued={groups.queued.length > 0} />
      {a.kind === 'hidden' ? (
        <div class="notice" data-testid="not-exposed" role="status">{a.reason}{hasTasks ? ' Your existing tasks are listed below.' : ''}</div>
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
              models={state.models}
              blockedText={!state.hasApiKey ? 'Set an API key first.' : availabilityText(a, now)}
              focusTick={focusTick + (formOpen ? 1 : 0)}
              submit={async (input) => {
                const { taskId } = await channel.request('createTask', { input });
                if (taskId === null) return false; // not confirmed: keep what was typed
                setFormOpen(false);
              }}
              onError={onError}
              onDone={hasTasks ? () => setFormOpen(false) : undefined}
            />
          )}
        </div>
      )}
      {SECTIONS.map(({ name, label, icon }) => {
        const cards = groups[name];
        if (cards.length === 0) return null;
        const limit = shown[name] ?? PAGE;
        return (
          <section key={name} class={`section ${name}`} aria-labelledby={`section-${name}`} data-testid={`section-${name}`}>
            <h2 id={`section-${name}`}>
              <span class={`codicon codicon-${icon}`} aria-hidden="true" /> {label} <vscode-badge variant="counter">{cards.length}</vscode-badge>
            </h2>
            {name === 'queued' && a.offPeakOpensAt !== undefined && (
              <p class="window-opens" data-testid="window-opens">
                <span class="codicon codicon-clock" aria-hidden="true" /> {offPeakOpeningText(a.offPeakOpensAt, now)}
              </p>
            )}
            <ul class="cards" role="list">
              {cards.slice(0, limit).map((t) => (
                <Card key={t.id} card={t} isNew={t.unseen || held.has(t.id)} now={ticks(t) ? now : 0} models={state.models} act={act} channel={channel} onError={onError} onMessage={setMessage} />
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
      {!hasTasks && a.kind !== 'hidden' && <p class="empty">No tasks yet.</p>}
      <History history={state.history} act={act} channel={channel} />
    </main>
  );
}

function GatewayHealth({ availability: a, now, hasQueued }: { availability: AvailabilityView; now: number; hasQueued: boolean }) {
  if (a.kind !== 'unreachable') return null;
  return (
    <div class="warning" role="status" data-testid="gateway-health">
      <span class="codicon codicon-warning" aria-hidden="true" /> The gateway cannot be reached{hasQueued ? ': queue positions may be out of date' : ''}.
      {a.lastSuccessAt !== undefined && <> Last reached {formatAgo(a.lastSuccessAt, now)}.</>}
      {a.nextCheckAt !== undefined && <> Next try {a.nextCheckAt > now ? `in ${formatDuration(a.nextCheckAt - now + 999)}` : 'now'}.</>}
    </div>
  );
}

function PlanLock({ availability: a }: { availability: AvailabilityView }) {
  return (
    <div class="notice plan-lock" data-testid="plan-lock" role="status">
      <span class="codicon codicon-lock" aria-hidden="true" /> {a.upgradeHint ?? a.reason}
      {a.upgradeUrl && /^https?:\/\//.test(a.upgradeUrl) && (
        <> <a href={a.upgradeUrl} data-testid="upgrade-link">Upgrade your plan</a></>
      )}
    </div>
  );
}

function AvailabilityHint({ availability, now, hasApiKey }: { availability: AvailabilityView; now: number; hasApiKey: boolean }) {
  const text = !hasApiKey ? 'Set an API key first.' : availabilityText(availability, now);
  if (!text) return null;
  return <span class="hint" data-testid="availability" role="status">{text}</span>;
}

function TaskForm({ workspaces, models, blockedText, focusTick, submit, onError, initial, onDone }: {
  workspaces: PanelState['workspaces'];
  models: string[];
  /** Why creating is not possible now (the submit button is disabled); undefined when it is. */
  blockedText?: string;
  focusTick: number;
  /** Resolves false when nothing was done (a declined confirmation): the form keeps its input. */
  submit(input: CreateTaskForm): Promise<boolean | void>;
  onError(message: string | undefined): void;
  initial?: TaskCard;
  onDone?(): void;
}) {
  // An automatic title (the prompt's first line) stays automatic: an edited prompt renames the task.
  const [title, setTitle] = useState(initial && !initial.autoTitle ? initial.title : '');
  const [prompt, setPrompt] = useState(initial?.prompt ?? '');
  const [workspacePath, setWorkspace] = useState(initial?.workspacePath ?? workspaces[0]?.path ?? '');
  const [permissionMode, setMode] = useState<CreateTaskForm['permissionMode']>(initial?.permissionMode ?? 'default');
  const [model, setModel] = useState(initial?.model ?? '');
  const [thoughtLevel, setThought] = useState(initial?.thoughtLevel ?? '');
  const [ownBranch, setOwnBranch] = useState<boolean | undefined>(undefined);
  const branchDefault = workspaces.find((w) => w.path === workspacePath)?.ownBranch;
  const [busy, setBusy] = useState(false);
  const promptRef = useRef<HTMLElement>(null);
  useEffect(() => {
    if (focusTick > 0) promptRef.current?.focus();
  }, [focusTick]);
  const editing = initial !== undefined;
  const blocked = !editing && blockedText !== undefined;
  const canSubmit = !busy && !blocked && prompt.trim() !== '';
  const onSubmit = async (e: Event) => {
    e.preventDefault();
    // Enter in a field must not send a form the button would not send.
    if (!canSubmit) return;
    setBusy(true);
    try {
      const chosen = ownBranch ?? branchDefault;
      const done = await submit({ title, prompt, workspacePath, permissionMode, model: model || null, thoughtLevel: thoughtLevel || null, ...(chosen === undefined ? {} : { ownBranch: chosen }) });
      onError(undefined);
      if (done === false) return;
      if (!editing) {
        setTitle('');
        setPrompt('');
      }
      onDone?.();
    } catch (err) {
      onError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const onTitleKey = (e: KeyboardEvent) => {
    if (e.key !== 'Enter') return;
    // Enter in the title goes on to the instructions; it never submits an empty prompt.
    e.preventDefault();
    if (prompt.trim() === '') promptRef.current?.focus();
    else void onSubmit(e);
  };
  const mode = PERMISSION_MODE_CHOICES.find((m) => m.value === permissionMode);
  return (
    <form class="task-form" onSubmit={onSubmit} data-testid={editing ? 'edit-form' : 'create-form'} aria-label={editing ? 'Edit task' : 'New task'}>
      {!editing && <h2><span class="codicon codicon-add" aria-hidden="true" /> New task</h2>}
      <vscode-label for={editing ? `title-${initial.id}` : 'title'}>Title</vscode-label>
      <vscode-textfield
        id={editing ? `title-${initial.id}` : 'title'}
        data-testid="title"
        placeholder="Optional; the prompt's first line otherwise"
        value={title}
        onInput={(e) => setTitle(valueOf(e))}
        onKeyDown={onTitleKey}
      />
      <vscode-label for={editing ? `prompt-${initial.id}` : 'prompt'}>Instructions</vscode-label>
      <vscode-textarea
        id={editing ? `prompt-${initial.id}` : 'prompt'}
        ref={promptRef}
        data-testid="prompt"
        rows={5}
        resize="vertical"
        placeholder="What should the agent do?"
        value={prompt}
        onInput={(e) => setPrompt(valueOf(e))}
      />
      <div class="row">
        <div>
          <vscode-label>Workspace</vscode-label>
          <vscode-single-select data-testid="workspace" value={workspacePath} disabled={editing} onChange={(e) => setWorkspace(valueOf(e))}>
            {workspaces.map((w) => <vscode-option key={w.path} value={w.path}>{w.name}</vscode-option>)}
          </vscode-single-select>
        </div>
        <div>
          <vscode-label>Permissions</vscode-label>
          <vscode-single-select data-testid="permission-mode" value={permissionMode} onChange={(e) => setMode(valueOf(e) as CreateTaskForm['permissionMode'])}>
            {PERMISSION_MODE_CHOICES.map((m) => <vscode-option key={m.value} value={m.value} description={m.detail}>{m.label}</vscode-option>)}
          </vscode-single-select>
        </div>
        <div>
          <vscode-label>Model</vscode-label>
          <vscode-single-select data-testid="model" value={model} onChange={(e) => setModel(valueOf(e))}>
            <vscode-option value="">Gateway default</vscode-option>
            {models.map((m) => <vscode-option key={m} value={m}>{m}</vscode-option>)}
          </vscode-single-select>
        </div>
        <div>
          <vscode-label>Thinking</vscode-label>
          <vscode-single-select data-testid="thought-level" value={thoughtLevel} onChange={(e) => setThought(valueOf(e))}>
            {THOUGHT_LEVELS.map((l) => <vscode-option key={l} value={l}>{l || 'Default'}</vscode-option>)}
          </vscode-single-select>
        </div>
      </div>
      {mode && <p class="hint permission-detail" data-testid="permission-detail">{mode.detail}</p>}
      {!editing && branchDefault !== undefined && <OwnBranchToggle checked={ownBranch ?? branchDefault} onChange={setOwnBranch} />}
      <div class="buttons">
        <vscode-button data-testid={editing ? 'save' : 'submit'} disabled={!canSubmit} onClick={onSubmit}>
          {editing ? 'Save' : 'Queue task'}
        </vscode-button>
        {onDone && <vscode-button secondary data-testid="discard" onClick={() => onDone()}>{editing ? 'Discard' : 'Close'}</vscode-button>}
        {blocked && <span class="hint" data-testid="availability" role="status">{blockedText}</span>}
      </div>
    </form>
  );
}

interface CardProps {
  card: TaskCard;
  /** Its result is new to the user: unseen, or first shown while the panel is open now. */
  isNew: boolean;
  models: string[];
  /** The ticking clock for cards with a running duration; 0 for the others (so they do not re-render). */
  now: number;
  act: Act;
  channel: HostChannel;
  onError(message: string | undefined): void;
  onMessage(message: string | undefined): void;
}

function sameCard(a: TaskCard, b: TaskCard): boolean {
  for (const key of Object.keys(a) as (keyof TaskCard)[]) {
    if (key === 'actions' || key === 'ask' || key === 'unseen') continue;
    if (a[key] !== b[key]) return false;
  }
  // Each snapshot carries new ask objects: the same question is the same id.
  if (a.ask?.id !== b.ask?.id || a.ask?.more !== b.ask?.more) return false;
  const x = a.actions;
  const y = b.actions;
  return x.pause === y.pause && x.continue === y.continue && x.edit === y.edit && x.cancel === y.cancel && x.delete === y.delete;
}

/** A new snapshot re-renders only the cards whose content changed. */
const Card = memo(CardView, (prev: CardProps, next: CardProps) =>
  prev.now === next.now && prev.isNew === next.isNew && prev.models === next.models && prev.act === next.act && prev.channel === next.channel && sameCard(prev.card, next.card),
);

function CardView({ card, isNew, now, models, act, channel, onError, onMessage }: CardProps) {
  const [editing, setEditing] = useState(false);
  const [followingUp, setFollowingUp] = useState(false);
  const [segments, setSegments] = useState<SegmentView[] | undefined>();
  const [expanded, setExpanded] = useState(false);
  const detailsId = `details-${card.id}`;
  const loadSegments = () => void act(channel.request('segments', { taskId: card.id })).then((r) => r && setSegments(r.segments));
  useEffect(() => {
    if (expanded) loadSegments();
  }, [expanded, card.segments, card.status]);
  const elapsed = card.startedAt ? formatDuration((card.endedAt ?? now) - card.startedAt) : undefined;
  const run = (work: Promise<unknown>) => void act(work);
  return (
    <li class={`card ${card.phase}`} data-testid={`card-${card.id}`} data-phase={card.phase} aria-label={`${card.title}: ${phaseLabel(card)}`}>
      <div class="card-head">
        <button type="button" class="icon expand" data-testid="expand" aria-expanded={expanded} aria-controls={detailsId} title={expanded ? 'Hide details' : 'Show details and segments'} onClick={() => setExpanded(!expanded)}>
          <span class={`codicon codicon-chevron-${expanded ? 'down' : 'right'}`} aria-hidden="true" />
        </button>
        <span class={`phase-icon codicon codicon-${PHASE_ICONS[card.phase]}`} aria-hidden="true" />
        <span class="title" title={card.title} data-testid="title">{card.title}</span>
        {isNew && <span class="new-mark" data-testid="new-mark" title="A result you have not seen yet">New</span>}
        <FollowUpMark title={card.followUpOfTitle} />
        <span class={`phase ${card.phase}`} data-testid="phase">{phaseLabel(card)}</span>
        {elapsed && <span class="elapsed" data-testid="elapsed" title={card.endedAt ? 'How long it took' : 'Running for'}>{elapsed}</span>}
        <span class="actions" role="group" aria-label="Task actions">
          {card.actions.pause && <ActionButton testid="pause" icon="debug-pause" label="Pause" onClick={() => run(channel.request('pause', { taskId: card.id }))} />}
          {card.actions.continue && (
            <ActionButton
              testid="continue"
              icon="debug-continue"
              label="Continue"
              onClick={() =>
                void act(channel.request('continue', { taskId: card.id })).then((r) => {
                  if (r?.ticket === 'retake_pending') onMessage(`"${card.title}" is queued again, but no new ticket could be taken yet${r.error ? ` (${r.error})` : ''}; it is retried automatically.`);
                  else onMessage(undefined);
                })
              }
            />
          )}
          {card.actions.edit && <ActionButton testid="edit" icon="edit" label="Edit" onClick={() => setEditing(true)} />}
          {card.startedAt != null && <ActionButton testid="terminal" icon="terminal" label="Terminal" onClick={() => run(channel.request('openTerminal', { taskId: card.id }))} />}
          <SessionButtons taskId={card.id} openSession={card.actions.openSession} followUp={card.actions.followUp} act={act} channel={channel} onFollowUp={() => setFollowingUp(true)} />
          <ReviewButton taskId={card.id} show={card.workplace?.reviewable ?? false} act={act} channel={channel} />
          {card.actions.cancel && <ActionButton testid="cancel" icon="stop-circle" label="Cancel" onClick={() => run(channel.request('cancel', { taskId: card.id }))} />}
          {card.actions.delete && <ActionButton testid="delete" icon="trash" label="Delete" onClick={() => run(channel.request('delete', { taskId: card.id }))} />}
        </span>
      </div>
      {followingUp && <FollowUpForm taskId={card.id} taskTitle={card.title} act={act} channel={channel} onMessage={onMessage} onDone={() => setFollowingUp(false)} />}
      {card.ask && <AskPrompt key={card.ask.id} ask={card.ask} taskId={card.id} now={now} act={act} channel={channel} onMessage={onMessage} />}
      {card.failureReason && <div class="failure" data-testid="failure">{card.failureReason}</div>}
      {!card.failureReason && card.lastError && <div class="last-error">{card.lastError}</div>}
      <WorkplaceBlock card={card} act={act} channel={channel} />
      {expanded && (
        <div class="details" id={detailsId} data-testid="details">
          <p class="prompt">{card.prompt}</p>
          <div class="meta">
            <span title={card.workspacePath}><span class="codicon codicon-folder" aria-hidden="true" /> {card.workspacePath.split(/[\\/]/).pop()}</span>
            {card.model && <span>{card.model}</span>}
            <span>{PERMISSION_MODE_CHOICES.find((m) => m.value === card.permissionMode)?.label}</span>
            <span>Queued {formatTime(card.queuedAt)}</span>
            {card.filesChanged != null ? <span>{card.filesChanged} files changed</span> : (card.phase === 'completed' || card.phase === 'failed') && <span>Files changed: unknown</span>}
            <FollowUpMark title={card.followUpOfTitle} />
          </div>
          <Segments segments={segments} />
        </div>
      )}
      {editing && (
        <TaskForm
          workspaces={[{ name: card.workspacePath, path: card.workspacePath }]}
          models={models}
          focusTick={1}
          initial={card}
          submit={async (input) => {
            await channel.request('editTask', {
              taskId: card.id,
              patch: { title: input.title, prompt: input.prompt, permissionMode: input.permissionMode, model: input.model, thoughtLevel: input.thoughtLevel },
            });
          }}
          onError={onError}
          onDone={() => setEditing(false)}
        />
      )}
    </li>
  );
}

/** The agent's question (untrusted model text, rendered as text) with Allow / Deny. */
function AskPrompt({ ask, taskId, now, act, channel, onMessage }: {
  ask: CardAsk;
  taskId: string;
  now: number;
  act: Act;
  channel: HostChannel;
  onMessage(message: string | undefined): void;
}) {
  const [busy, setBusy] = useState(false);
  const answer = (decision: PanelParams<'answerAsk'>['decision']) => {
    setBusy(true);
    void act(channel.request('answerAsk', { taskId, askId: ask.id, decision })).then((r) => {
      setBusy(false);
      if (r) onMessage(answerOutcomeText(decision, r.outcome, ask.tool));
    });
  };
  const questionId = `ask-${ask.id}`;
  return (
    <div class="ask" role="group" aria-labelledby={questionId} data-testid="ask">
      <span class="codicon codicon-question" aria-hidden="true" />
      <div class="ask-body">
        <p class="ask-question" id={questionId}>
          <span class="ask-tool" data-testid="ask-tool">{ask.tool}</span>: <span data-testid="ask-question">{ask.question}</span>
        </p>
        <p class="hint" data-testid="ask-deadline">{askDeadlineText(ask, now || Date.now())}</p>
      </div>
      <span class="ask-buttons">
        <vscode-button data-testid="ask-allow" disabled={busy} onClick={() => answer('allow')}>Allow</vscode-button>
        <vscode-button secondary data-testid="ask-deny" disabled={busy} onClick={() => answer('deny')}>Deny</vscode-button>
      </span>
    </div>
  );
}

function ActionButton({ testid, icon, label, onClick }: { testid: string; icon: string; label: string; onClick(): void }) {
  return (
    <button type="button" class="action" data-testid={testid} title={label} aria-label={label} onClick={onClick}>
      <span class={`codicon codicon-${icon}`} aria-hidden="true" /> <span class="label">{label}</span>
    </button>
  );
}

function Segments({ segments }: { segments: SegmentView[] | undefined }) {
  if (!segments) return <p class="hint">Loading segments…</p>;
  if (segments.length === 0) return <p class="hint">No ticket yet.</p>;
  const time = (t: number | null) => (t === null ? '—' : formatTime(t));
  return (
    <div class="segments-scroll">
    <table class="segments" data-testid="segments">
      <caption>Tickets and segments</caption>
      <thead>
        <tr><th scope="col">#</th><th scope="col">End reason</th><th scope="col">Queued</th><th scope="col">Ready</th><th scope="col">Admitted</th><th scope="col">Ended</th></tr>
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
          </tr>
        ))}
      </tbody>
    </table>
    </div>
  );
}

function History({ history, act, channel }: { history: PanelState['history']; act: Act; channel: HostChannel }) {
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
            <span class={`status ${h.status}`}>{HISTORY_LABELS[h.status]}</span>
            <span class="when">Triggered {formatTime(h.triggeredAt)}</span>
            <span class="duration">{formatDuration(h.durationMs)}</span>
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
