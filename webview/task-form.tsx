// The create form (also the edit form inside a card, and a schedule's edit form): title,
// instructions, workspace, permissions, model and thinking level; when creating, Repeat makes it a
// schedule (docs/flows.md#schedules-and-chains).
import type { Ref } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { CHECK_COMMAND_HINT } from '../src/protocol/check-hint';
import type { ScheduleDraft, ScheduleView } from '../src/protocol/schedules';
import type { CreateTaskForm, PanelState, TaskCard } from '../src/protocol/webview';
import { AfterField, type AfterChoice } from './after-field';
import { valueOf } from './field-value';
import { promptHint } from './format';
import { choiceOf, REPEAT_ONCE, RepeatFields, ruleOf, type ScheduleRule } from './repeat-fields';
import { OwnBranchToggle } from './workplace';
import { SelectField } from './select-field';

export const PERMISSION_MODE_CHOICES: { value: CreateTaskForm['permissionMode']; label: string; detail: string }[] = [
  {
    value: 'default',
    label: 'Ask before edits and commands',
    detail:
      'The agent asks before it changes a file or runs a command; an ask nobody answers parks the task or is denied, as Off-Peak: Unanswered Question says.',
  },
  { value: 'acceptEdits', label: 'Accept edits', detail: 'File edits in the workspace go ahead without asking; commands still ask.' },
  { value: 'plan', label: 'Plan only (read-only)', detail: 'The agent reads and plans but changes nothing.' },
  {
    value: 'bypassPermissions',
    label: 'Bypass permissions',
    detail: 'Edits and commands run without asking. Use only in a workspace you can restore.',
  },
];
export const THOUGHT_LEVELS = ['', 'low', 'medium', 'high'];

/** A `datetime-local` field's "2026-12-08T02:00" as epoch ms on this machine's clock; undefined when empty or unreadable. */
export function localDateTimeMs(text: string): number | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute] = match.slice(1).map(Number);
  return new Date(year!, month! - 1, day!, hour!, minute!).getTime();
}

/** Epoch ms as a `datetime-local` field's "2026-12-08T02:00" on this machine's clock. */
export function localDateTimeText(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}T${two(d.getHours())}:${two(d.getMinutes())}`;
}

/** A mode's help; "Ask before edits" says what an unanswered ask does under the settings in force. */
export function permissionDetail(mode: (typeof PERMISSION_MODE_CHOICES)[number], unansweredText: string | undefined): string {
  return mode.value === 'default' && unansweredText
    ? `The agent asks before it changes a file or runs a command; ${unansweredText}.`
    : mode.detail;
}

/** The instructions field of a new or edited task and of a follow-up: its test id, height and hint. */
const PROMPT_AREAS = {
  task: { testid: 'prompt', rows: 5, placeholder: 'What should the agent do?' },
  followUp: { testid: 'follow-up-prompt', rows: 3, placeholder: 'What should the agent do next, in the same session and folder?' },
} as const;

/** The instructions textarea the task form and the follow-up form share. */
export function PromptArea({
  kind,
  id,
  areaRef,
  value,
  onValue,
}: {
  kind: keyof typeof PROMPT_AREAS;
  id: string;
  areaRef: Ref<HTMLElement>;
  value: string;
  onValue(value: string): void;
}) {
  const { testid, rows, placeholder } = PROMPT_AREAS[kind];
  return (
    <vscode-textarea
      id={id}
      ref={areaRef}
      data-testid={testid}
      rows={rows}
      resize="vertical"
      placeholder={placeholder}
      value={value}
      onInput={(e) => onValue(valueOf(e))}
    />
  );
}

export function TaskForm({
  workspaces,
  models,
  defaultModelText,
  unansweredText,
  blockedText,
  focusTick,
  submit,
  onError,
  initial,
  onDone,
  afterChoices = [],
  submitSchedule,
  schedule,
  zoneText = 'local time',
}: {
  workspaces: PanelState['workspaces'];
  /** The tasks a new one may wait for ("After", docs/flows.md#schedules-and-chains): not failed or cancelled. */
  afterChoices?: AfterChoice[];
  /** What an unanswered question does now (the setup line's `unansweredText`). */
  unansweredText?: string;
  models: string[];
  /** The first Model choice: what a task that names none runs on (absent: the gateway's default). */
  defaultModelText?: string;
  /** Why creating is not possible now (the submit button is disabled); undefined when it is. */
  blockedText?: string;
  focusTick: number;
  /** Resolves false when nothing was done (a declined confirmation): the form keeps its input. */
  submit(input: CreateTaskForm): Promise<boolean | void>;
  onError(message: string | undefined): void;
  initial?: TaskCard;
  onDone?(): void;
  /** Offers Repeat: a rule chosen sends the form as a schedule; resolves false when nothing was done. */
  submitSchedule?(draft: ScheduleDraft, rule: ScheduleRule): Promise<boolean | void>;
  /** The schedule this form edits (its future runs), filled from its draft and rule. */
  schedule?: ScheduleView;
  /** The machine's time zone as the Repeat hint names it. */
  zoneText?: string;
}) {
  const draft = schedule?.draft;
  // An automatic title (the prompt's first line) stays automatic: an edited prompt renames the task.
  const [title, setTitle] = useState(initial && !initial.autoTitle ? initial.title : (draft?.title ?? ''));
  const [prompt, setPrompt] = useState(initial?.prompt ?? draft?.prompt ?? '');
  const [workspacePath, setWorkspace] = useState(initial?.workspacePath ?? draft?.workspacePath ?? workspaces[0]?.path ?? '');
  const [permissionMode, setMode] = useState<CreateTaskForm['permissionMode']>(
    initial?.permissionMode ?? draft?.permissionMode ?? 'default',
  );
  const [model, setModel] = useState(initial?.model ?? draft?.model ?? '');
  const [thoughtLevel, setThought] = useState(initial?.thoughtLevel ?? draft?.thoughtLevel ?? '');
  const [ownBranch, setOwnBranch] = useState<boolean | undefined>(draft?.ownBranch);
  const [repeat, setRepeat] = useState(schedule ? choiceOf(schedule.rule) : REPEAT_ONCE);
  const rule = ruleOf(repeat);
  const asSchedule = repeat.kind !== 'once';
  const [notBefore, setNotBefore] = useState(initial?.notBefore != null ? localDateTimeText(initial.notBefore) : '');
  const [afterTaskId, setAfter] = useState('');
  const [inItsBranch, setInItsBranch] = useState(true);
  const folder = workspaces.find((w) => w.path === workspacePath);
  // Until typed in, the check command is the folder's last one (docs/flows.md#checks).
  const [typedCheck, setCheck] = useState<string | undefined>(draft ? (draft.checkCommand ?? '') : undefined);
  const checkCommand = typedCheck ?? folder?.lastCheckCommand ?? '';
  const branchDefault = folder?.ownBranch;
  const [busy, setBusy] = useState(false);
  const promptRef = useRef<HTMLElement>(null);
  useEffect(() => {
    if (focusTick > 0) promptRef.current?.focus();
  }, [focusTick]);
  const editing = initial !== undefined;
  /** Field ids unique in the panel: a card's and a schedule's form may be open beside the create form. */
  const fieldId = (name: string) => (editing ? `${name}-${initial.id}` : schedule ? `${name}-schedule-${schedule.id}` : name);
  // A schedule takes no ticket now: what blocks queueing a task now does not block it.
  const blocked = !editing && !asSchedule && blockedText !== undefined;
  const promptState = promptHint(prompt);
  const canSubmit = !busy && !blocked && !promptState.blocks && typeof rule !== 'string';
  const onSubmit = async (e: Event) => {
    e.preventDefault();
    // Enter in a field must not send a form the button would not send.
    if (!canSubmit) return;
    setBusy(true);
    try {
      const chosen = folder?.noOwnBranch ? false : (ownBranch ?? branchDefault);
      const startAt = localDateTimeMs(notBefore);
      // What a task and a schedule's saved task both carry; "not before" and "after" belong to one task.
      const fields: ScheduleDraft = {
        title,
        prompt,
        workspacePath,
        permissionMode,
        model: model || null,
        thoughtLevel: thoughtLevel || null,
        ...(chosen === undefined ? {} : { ownBranch: chosen }),
        // A box the user emptied is sent empty: the host then stops offering the folder's last command.
        ...(!editing && (checkCommand.trim() || typedCheck !== undefined) ? { checkCommand: checkCommand.trim() } : {}),
      };
      const done =
        typeof rule === 'object' && rule !== null && submitSchedule
          ? await submitSchedule(fields, rule)
          : await submit({
              ...fields,
              ...(startAt === undefined ? {} : { notBefore: startAt }),
              ...(afterTaskId ? { afterTaskId, continueInBranch: inItsBranch } : {}),
            });
      onError(undefined);
      if (done === false) return;
      if (!editing && !schedule) {
        setRepeat(REPEAT_ONCE);
        setTitle('');
        setPrompt('');
        setNotBefore('');
        setCheck(undefined);
        setAfter('');
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
    <form
      class="task-form"
      onSubmit={onSubmit}
      data-testid={editing ? 'edit-form' : schedule ? 'schedule-form' : 'create-form'}
      aria-label={editing ? 'Edit task' : schedule ? 'Edit schedule' : 'New task'}
    >
      {!editing && !schedule && (
        <h2>
          <span class="codicon codicon-add" aria-hidden="true" /> New task
        </h2>
      )}
      <vscode-label for={fieldId('title')}>Title</vscode-label>
      <vscode-textfield
        id={fieldId('title')}
        data-testid="title"
        placeholder="Optional; the prompt's first line otherwise"
        value={title}
        onInput={(e) => setTitle(valueOf(e))}
        onKeyDown={onTitleKey}
      />
      <vscode-label for={fieldId('prompt')}>Instructions</vscode-label>
      <PromptArea kind="task" id={fieldId('prompt')} areaRef={promptRef} value={prompt} onValue={setPrompt} />
      {(promptState.counter || promptState.hint) && (
        <p class="hint prompt-hint" data-testid="prompt-hint" role="status">
          {promptState.counter && (
            <span class="counter" data-testid="prompt-counter">
              {promptState.counter}
            </span>
          )}
          {promptState.counter && promptState.hint && ' · '}
          {promptState.hint}
        </p>
      )}
      <div class="row">
        <SelectField
          label="Workspace"
          testid="workspace"
          value={workspacePath}
          disabled={editing}
          choices={workspaces.map((w) => ({ value: w.path, label: w.name }))}
          onChange={setWorkspace}
        >
          {folder?.typicalSpend && (
            <span class="hint" data-testid="typical-spend">
              {folder.typicalSpend}
            </span>
          )}
        </SelectField>
        <SelectField
          label="Permissions"
          testid="permission-mode"
          value={permissionMode}
          choices={PERMISSION_MODE_CHOICES.map((m) => ({ value: m.value, label: m.label, description: m.detail }))}
          onChange={(v) => setMode(v as CreateTaskForm['permissionMode'])}
        />
        <SelectField
          label="Model"
          testid="model"
          value={model}
          choices={[{ value: '', label: defaultModelText ?? 'Gateway default' }, ...models.map((m) => ({ value: m, label: m }))]}
          onChange={setModel}
        />
        <SelectField
          label="Thinking"
          testid="thought-level"
          value={thoughtLevel}
          choices={THOUGHT_LEVELS.map((l) => ({ value: l, label: l || 'Default' }))}
          onChange={setThought}
        />
      </div>
      {mode && (
        <p class="hint permission-detail" data-testid="permission-detail">
          {permissionDetail(mode, unansweredText)}
        </p>
      )}
      {!editing && submitSchedule && (
        <RepeatFields choice={repeat} onChange={setRepeat} zoneText={zoneText} once={!schedule} timeId={fieldId('repeat-time')} />
      )}
      {typeof rule === 'string' && (
        <p class="hint" data-testid="repeat-problem" role="status">
          {rule}
        </p>
      )}
      {/* A task still waiting for its time can move it (cleared: it takes its ticket now). */}
      {(editing ? initial.notBefore != null : !asSchedule) && (
        <div class="not-before">
          <vscode-label for={fieldId('not-before')}>Not before</vscode-label>
          <vscode-textfield
            id={fieldId('not-before')}
            type="datetime-local"
            data-testid="not-before"
            value={notBefore}
            onInput={(e) => setNotBefore(valueOf(e))}
            onChange={(e) => setNotBefore(valueOf(e))}
          />
          <span class="hint">Optional: its ticket is taken then, so its place in the queue counts from then.</span>
        </div>
      )}
      {!editing && (
        <div class="check-command">
          <vscode-label for={fieldId('check-command')}>Check command</vscode-label>
          <vscode-textfield
            id={fieldId('check-command')}
            data-testid="check-command"
            placeholder="e.g. npm test"
            value={checkCommand}
            onInput={(e) => setCheck(valueOf(e))}
          />
          <span class="hint" data-testid="check-hint">
            {CHECK_COMMAND_HINT}
          </span>
        </div>
      )}
      {!editing && !asSchedule && afterChoices.length > 0 && (
        <AfterField
          choices={afterChoices}
          value={afterTaskId}
          onChange={setAfter}
          inItsBranch={inItsBranch}
          onInItsBranch={setInItsBranch}
        />
      )}
      {!editing && branchDefault !== undefined && (
        <OwnBranchToggle
          checked={folder?.noOwnBranch ? false : (ownBranch ?? branchDefault)}
          cannot={folder?.noOwnBranch}
          continuing={!asSchedule && afterTaskId !== '' && inItsBranch}
          onChange={setOwnBranch}
        />
      )}
      <div class="buttons">
        <vscode-button data-testid={editing ? 'save' : 'submit'} disabled={!canSubmit} onClick={onSubmit}>
          {editing ? 'Save' : schedule ? 'Save schedule' : asSchedule ? 'Create schedule' : 'Queue task'}
        </vscode-button>
        {onDone && (
          <vscode-button secondary data-testid="discard" onClick={() => onDone()}>
            {editing ? 'Discard' : 'Close'}
          </vscode-button>
        )}
        {blocked && (
          <span class="hint" data-testid="availability" role="status">
            {blockedText}
          </span>
        )}
        {schedule && (
          <span class="hint" data-testid="future-runs">
            Applies to its future runs; a run already queued keeps what it had.
          </span>
        )}
      </div>
    </form>
  );
}
