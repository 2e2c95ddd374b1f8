// "Open session" and "Follow up…" on a finished task's card and History row
// (docs/flows.md#open-session, docs/flows.md#follow-up). Task text is rendered as plain text.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { PanelParams } from '../src/protocol/webview';
import { ActionLabel } from './action-button';
import type { HostChannel } from './host-channel';
import { PromptArea } from './task-form';

type Act = <T>(work: Promise<T>) => Promise<T | undefined>;
type Mode = NonNullable<PanelParams<'followUp'>['permissionMode']>;

const MODES: { value: Mode | ''; label: string }[] = [
  { value: '', label: 'Same as the task' },
  { value: 'default', label: 'Ask before edits and commands' },
  { value: 'acceptEdits', label: 'Accept edits' },
  { value: 'plan', label: 'Plan only (read-only)' },
  { value: 'bypassPermissions', label: 'Bypass permissions' },
];

function Button({
  testid,
  icon,
  label,
  short,
  title,
  onClick,
}: {
  testid: string;
  icon: string;
  label: string;
  short: string;
  title: string;
  onClick(): void;
}) {
  return (
    <button type="button" class="action" data-testid={testid} title={title} aria-label={title} onClick={onClick}>
      <span class={`codicon codicon-${icon}`} aria-hidden="true" /> <ActionLabel label={label} short={short} />
    </button>
  );
}

/** The two buttons; `onFollowUp` opens the form (its place in the row is the caller's). */
export function SessionButtons({
  taskId,
  openSession,
  followUp,
  act,
  channel,
  onFollowUp,
  sessionLabel = 'Open session',
  sessionTestId = 'open-session',
}: {
  taskId: string;
  openSession: boolean;
  followUp: boolean;
  act: Act;
  channel: HostChannel;
  onFollowUp(): void;
  sessionLabel?: string;
  sessionTestId?: string;
}) {
  return (
    <>
      {openSession && (
        <Button
          testid={sessionTestId}
          icon="comment-discussion"
          label={sessionLabel}
          short="Session"
          title="Open the agent session: Claude Code continues it in a terminal; the reference agent's transcript is shown read-only"
          onClick={() => void act(channel.request('openSession', { taskId }))}
        />
      )}
      {followUp && (
        <Button
          testid="follow-up"
          icon="reply"
          label="Follow up…"
          short="Follow up"
          title="New instructions that continue this task's session as a new off-peak task"
          onClick={onFollowUp}
        />
      )}
    </>
  );
}

/** "follow-up of <title>" on a follow-up's card or History row. */
export function FollowUpMark({ title }: { title: string | null | undefined }) {
  if (title === null || title === undefined) return null;
  return (
    <span class="follow-up-of" data-testid="follow-up-of" title={`A follow-up of "${title}": it continues that task's session`}>
      <span class="codicon codicon-reply" aria-hidden="true" /> follow-up of {title}
    </span>
  );
}

/** The follow-up's instructions (and, optionally, another permission mode). */
export function FollowUpForm({
  taskId,
  taskTitle,
  act,
  channel,
  onDone,
  onMessage,
}: {
  taskId: string;
  taskTitle: string;
  act: Act;
  channel: HostChannel;
  onDone(): void;
  onMessage(message: string | undefined): void;
}) {
  const [prompt, setPrompt] = useState('');
  const [mode, setMode] = useState<Mode | ''>('');
  const [busy, setBusy] = useState(false);
  const ref = useRef<HTMLElement>(null);
  useEffect(() => ref.current?.focus(), []);
  const canSubmit = !busy && prompt.trim() !== '';
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!canSubmit) return;
    setBusy(true);
    const result = await act(channel.request('followUp', { taskId, prompt, ...(mode ? { permissionMode: mode } : {}) }));
    setBusy(false);
    if (!result || result.taskId === null) return; // refused (the banner says why) or not confirmed: keep the text
    onMessage(`Queued a follow-up of "${taskTitle}": it continues that session when the gateway admits it.`);
    onDone();
  };
  return (
    <form class="task-form follow-up-form" data-testid="follow-up-form" aria-label={`Follow up ${taskTitle}`} onSubmit={submit}>
      <vscode-label for={`follow-up-${taskId}`}>Follow-up instructions</vscode-label>
      <PromptArea kind="followUp" id={`follow-up-${taskId}`} areaRef={ref} value={prompt} onValue={setPrompt} />
      <div class="buttons">
        <vscode-single-select
          data-testid="follow-up-mode"
          value={mode}
          onChange={(e) => setMode(((e.currentTarget as unknown as { value: string }).value ?? '') as Mode | '')}
        >
          {MODES.map((m) => (
            <vscode-option key={m.value} value={m.value}>
              {m.label}
            </vscode-option>
          ))}
        </vscode-single-select>
        <vscode-button data-testid="follow-up-submit" disabled={!canSubmit} onClick={submit}>
          Queue follow-up
        </vscode-button>
        <vscode-button secondary data-testid="follow-up-discard" onClick={() => onDone()}>
          Cancel
        </vscode-button>
      </div>
    </form>
  );
}
