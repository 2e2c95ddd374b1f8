// The Off-Peak Tasks panel: the task form, one card per task, and the 0/1-row-per-task History.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { CreateTaskInput, PanelState, TaskCard } from '../src/protocol/webview';
import type { HostChannel, RequestBody } from './host-channel';
import { availabilityText, formatDuration, formatTime, HISTORY_LABELS, phaseLabel } from './format';

const PERMISSION_MODES: { value: CreateTaskInput['permissionMode']; label: string }[] = [
  { value: 'default', label: 'Ask before edits and commands' },
  { value: 'acceptEdits', label: 'Accept edits' },
  { value: 'plan', label: 'Plan only (read-only)' },
  { value: 'bypassPermissions', label: 'Bypass permissions' },
];
const THOUGHT_LEVELS = ['', 'low', 'medium', 'high'];

type Value = { value: string };
const valueOf = (e: Event): string => (e.currentTarget as unknown as Value).value ?? '';

export function App({ channel, state, focusTick, error, onError }: {
  channel: HostChannel;
  state: PanelState | undefined;
  focusTick: number;
  error: string | undefined;
  onError(message: string | undefined): void;
}) {
  if (!state) return <main class="loading"><vscode-progress-ring /></main>;
  const act = (body: RequestBody) => channel.request(body).then(() => onError(undefined), (e: Error) => onError(e.message));
  const active = state.tasks.filter((t) => !['completed', 'failed', 'cancelled'].includes(t.status));
  const finished = state.tasks.filter((t) => ['completed', 'failed', 'cancelled'].includes(t.status));
  return (
    <main>
      {state.notice && <div class="notice" role="alert" data-testid="notice">{state.notice}</div>}
      {error && <div class="error" role="alert" data-testid="error">{error}</div>}
      {!state.hasApiKey && (
        <div class="notice" data-testid="no-key">
          No gateway API key is set. <vscode-button secondary onClick={() => act({ type: 'setApiKey' })}>Set API key…</vscode-button>
        </div>
      )}
      <TaskForm
        workspaces={state.workspaces}
        models={state.models}
        blockedText={!state.hasApiKey ? 'Set an API key first' : availabilityText(state.availability, state.now)}
        focusTick={focusTick}
        submit={(input) => channel.request({ type: 'createTask', input })}
        onError={onError}
      />
      <section aria-label="Tasks">
        <h2>Tasks <vscode-badge variant="counter">{active.length}</vscode-badge></h2>
        {active.length === 0 && <p class="empty">No queued or running tasks.</p>}
        {active.map((t) => <Card key={t.id} card={t} now={state.now} models={state.models} act={act} channel={channel} onError={onError} />)}
        {finished.map((t) => <Card key={t.id} card={t} now={state.now} models={state.models} act={act} channel={channel} onError={onError} />)}
      </section>
      <section aria-label="History" data-testid="history">
        <h2>History</h2>
        {state.history.length === 0 && <p class="empty">Nothing has run yet.</p>}
        {state.history.map((h) => (
          <div class="history-row" key={h.taskId} data-testid={`history-${h.taskId}`}>
            <span class="title" title={h.prompt}>{h.title}</span>
            <span class={`status ${h.status}`}>{HISTORY_LABELS[h.status]}</span>
            <span class="when">Triggered {formatTime(h.triggeredAt)}</span>
            <span class="duration">{formatDuration(h.durationMs)}</span>
            <vscode-button secondary title="Remove from History" data-testid="delete-history" onClick={() => act({ type: 'deleteHistory', taskId: h.taskId })}>Remove</vscode-button>
          </div>
        ))}
      </section>
    </main>
  );
}

function TaskForm({ workspaces, models, blockedText, focusTick, submit, onError, initial, onDone }: {
  workspaces: PanelState['workspaces'];
  models: string[];
  /** Why creating is not possible now (the submit button is disabled); undefined when it is. */
  blockedText?: string;
  focusTick: number;
  submit(input: CreateTaskInput): Promise<void>;
  onError(message: string | undefined): void;
  initial?: TaskCard;
  onDone?(): void;
}) {
  const [title, setTitle] = useState(initial?.title ?? '');
  const [prompt, setPrompt] = useState(initial?.prompt ?? '');
  const [workspacePath, setWorkspace] = useState(initial?.workspacePath ?? workspaces[0]?.path ?? '');
  const [permissionMode, setMode] = useState<CreateTaskInput['permissionMode']>(initial?.permissionMode ?? 'default');
  const [model, setModel] = useState(initial?.model ?? '');
  const [thoughtLevel, setThought] = useState(initial?.thoughtLevel ?? '');
  const [busy, setBusy] = useState(false);
  const promptRef = useRef<HTMLElement>(null);
  useEffect(() => {
    if (focusTick > 0) promptRef.current?.focus();
  }, [focusTick]);
  const editing = initial !== undefined;
  const blocked = !editing && blockedText !== undefined;
  const onSubmit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      await submit({ title, prompt, workspacePath, permissionMode, model: model || null, thoughtLevel: thoughtLevel || null });
      onError(undefined);
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
  return (
    <form class="task-form" onSubmit={onSubmit} data-testid={editing ? 'edit-form' : 'create-form'}>
      {!editing && <h2>Queue an off-peak task</h2>}
      <vscode-label>Title</vscode-label>
      <vscode-textfield data-testid="title" placeholder="Optional; the prompt's first line otherwise" value={title} onInput={(e) => setTitle(valueOf(e))} />
      <vscode-label>Instructions</vscode-label>
      <vscode-textarea ref={promptRef} data-testid="prompt" rows={5} resize="vertical" placeholder="What should the agent do?" value={prompt} onInput={(e) => setPrompt(valueOf(e))} />
      <div class="row">
        <div>
          <vscode-label>Workspace</vscode-label>
          <vscode-single-select data-testid="workspace" value={workspacePath} disabled={editing} onChange={(e) => setWorkspace(valueOf(e))}>
            {workspaces.map((w) => <vscode-option key={w.path} value={w.path}>{w.name}</vscode-option>)}
          </vscode-single-select>
        </div>
        <div>
          <vscode-label>Permissions</vscode-label>
          <vscode-single-select data-testid="permission-mode" value={permissionMode} onChange={(e) => setMode(valueOf(e) as CreateTaskInput['permissionMode'])}>
            {PERMISSION_MODES.map((m) => <vscode-option key={m.value} value={m.value}>{m.label}</vscode-option>)}
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
      <div class="buttons">
        <vscode-button data-testid={editing ? 'save' : 'submit'} disabled={busy || blocked || prompt.trim() === ''} onClick={onSubmit}>
          {editing ? 'Save' : 'Queue task'}
        </vscode-button>
        {editing && <vscode-button secondary onClick={() => onDone?.()}>Discard</vscode-button>}
        {blocked && <span class="hint" data-testid="availability">{blockedText}</span>}
      </div>
    </form>
  );
}

function Card({ card, now, models, act, channel, onError }: {
  card: TaskCard;
  models: string[];
  now: number;
  act(body: RequestBody): Promise<void>;
  channel: HostChannel;
  onError(message: string | undefined): void;
}) {
  const [editing, setEditing] = useState(false);
  const elapsed = card.startedAt ? formatDuration((card.endedAt ?? now) - card.startedAt) : undefined;
  return (
    <article class={`card ${card.phase}`} data-testid={`card-${card.id}`} data-phase={card.phase}>
      <header>
        <span class="title" title={card.prompt}>{card.title}</span>
        <span class={`phase ${card.phase}`} data-testid="phase">{phaseLabel(card)}</span>
      </header>
      <div class="meta">
        <span title={card.workspacePath}>{card.workspacePath.split(/[\\/]/).pop()}</span>
        {card.model && <span>{card.model}</span>}
        <span>Queued {formatTime(card.queuedAt)}</span>
        {elapsed && <span>{card.endedAt ? 'Took' : 'Running for'} {elapsed}</span>}
        {card.segments > 1 && <span>{card.segments} segments</span>}
        {card.filesChanged != null && <span>{card.filesChanged} files changed</span>}
      </div>
      {card.failureReason && <div class="failure">{card.failureReason}</div>}
      {!card.failureReason && card.lastError && <div class="last-error">{card.lastError}</div>}
      {editing ? (
        <TaskForm
          workspaces={[{ name: card.workspacePath, path: card.workspacePath }]}
          models={models}
          focusTick={1}
          initial={card}
          submit={(input) => channel.request({ type: 'editTask', taskId: card.id, patch: { title: input.title, prompt: input.prompt, permissionMode: input.permissionMode, model: input.model, thoughtLevel: input.thoughtLevel } })}
          onError={onError}
          onDone={() => setEditing(false)}
        />
      ) : (
        <div class="buttons">
          {card.actions.pause && <vscode-button secondary data-testid="pause" onClick={() => act({ type: 'pause', taskId: card.id })}>Pause</vscode-button>}
          {card.actions.continue && <vscode-button secondary data-testid="continue" onClick={() => act({ type: 'continue', taskId: card.id })}>Continue</vscode-button>}
          {card.actions.edit && <vscode-button secondary data-testid="edit" onClick={() => setEditing(true)}>Edit</vscode-button>}
          {card.startedAt != null && <vscode-button secondary data-testid="terminal" onClick={() => act({ type: 'openTerminal', taskId: card.id })}>Terminal</vscode-button>}
          {card.actions.cancel && <vscode-button secondary data-testid="cancel" onClick={() => act({ type: 'cancel', taskId: card.id })}>Cancel</vscode-button>}
          {card.actions.delete && <vscode-button secondary data-testid="delete" onClick={() => act({ type: 'delete', taskId: card.id })}>Delete</vscode-button>}
        </div>
      )}
    </article>
  );
}
