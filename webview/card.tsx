// One task card: its head (title, phase, actions), the agent's question, failure, details and the
// edit form. Every text from the task is rendered as plain text (JSX escapes it).
import { Component } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import type { SegmentView, TaskCard } from '../src/protocol/webview';
import { ActionButton } from './action-button';
import { CheckLine } from './check-line';
import type { AnswerOwner } from './ask-input';
import { AskPrompt } from './ask-prompt';
import { sameFields, sameUsage } from './card-extras';
import { FollowUpsSpend, GatewayOutageLine, ScheduleRunLine, UsageLimitLine, UsageTotal } from './card-extras-view';
import { filesChangedText, foldPrompt, formatDuration, formatTime, PHASE_ICONS, phaseLabel } from './format';
import type { Act } from './act';
import type { HostChannel } from './host-channel';
import { AllowedNotRunLine, QuestionList, RefusalMark, sameRefusals } from './questions';
import { Segments } from './segments';
import { FollowUpForm, FollowUpMark, SessionButtons } from './session-actions';
import { ReviewButton, WorkplaceBlock } from './workplace';
import { localDateTimeText, PERMISSION_MODE_CHOICES, TaskForm } from './task-form';
import { ViewStateContext } from './view-state';

export interface CardProps {
  card: TaskCard;
  /** Its result is new to the user: unseen, or first shown while the panel is open now. */
  isNew: boolean;
  models: string[];
  /** The Model list's first choice, as the create form words it (the agent's or the gateway's default). */
  defaultModelText?: string;
  /** The ticking clock for cards with a running duration; 0 for the others (so they do not re-render). */
  now: number;
  act: Act;
  channel: HostChannel;
  onError(message: string | undefined): void;
  onMessage(message: string | undefined, owner?: AnswerOwner): void;
}

export function sameCard(a: TaskCard, b: TaskCard): boolean {
  for (const key of Object.keys(a) as (keyof TaskCard)[]) {
    if (
      key === 'actions' ||
      key === 'ask' ||
      key === 'unseen' ||
      key === 'usage' ||
      key === 'withFollowUps' ||
      key === 'refusals' ||
      key === 'allowedNotRun' ||
      key === 'check' ||
      key === 'scheduleRun'
    )
      continue;
    if (a[key] !== b[key]) return false;
  }
  if (
    !sameUsage(a.usage, b.usage) ||
    !sameUsage(a.withFollowUps ?? null, b.withFollowUps ?? null) ||
    JSON.stringify(a.check) !== JSON.stringify(b.check) ||
    JSON.stringify(a.scheduleRun) !== JSON.stringify(b.scheduleRun)
  )
    return false;
  // Each snapshot carries new ask objects: the same question is the same id.
  if (a.ask?.id !== b.ask?.id || a.ask?.more !== b.ask?.more || !sameRefusals(a.refusals, b.refusals)) return false;
  if (a.allowedNotRun?.tool !== b.allowedNotRun?.tool || a.allowedNotRun?.summary !== b.allowedNotRun?.summary) return false;
  return sameFields(a.actions, b.actions, ['pause', 'continue', 'edit', 'cancel', 'delete']);
}

function sameProps(prev: CardProps, next: CardProps): boolean {
  return sameFields(prev, next, ['now', 'isNew', 'models', 'defaultModelText', 'act', 'channel']) && sameCard(prev.card, next.card);
}

/**
 * A new snapshot re-renders only the cards whose content changed. A class of its own rather than
 * preact/compat's memo: importing compat installs its props-rewriting hook on every element the
 * panel creates, about an eighth of the first render's script time at 1000 tasks.
 */
export class Card extends Component<CardProps> {
  override shouldComponentUpdate(next: CardProps): boolean {
    return !sameProps(this.props, next);
  }

  override render(props: CardProps) {
    return <CardView {...props} />;
  }
}

function CardView({ card, isNew, now, models, defaultModelText, act, channel, onError, onMessage }: CardProps) {
  const [editing, setEditing] = useState(false);
  const [followingUp, setFollowingUp] = useState(false);
  const [segments, setSegments] = useState<SegmentView[] | undefined>();
  // Expanded cards stay expanded across a window reload (the panel's saved view state).
  const viewState = useContext(ViewStateContext);
  const [expanded, setExpandedState] = useState(() => viewState?.isExpanded(card.id) ?? false);
  const setExpanded = (open: boolean) => {
    setExpandedState(open);
    viewState?.setExpanded(card.id, open);
  };
  const detailsId = `details-${card.id}`;
  const loadSegments = () => void act(channel.request('segments', { taskId: card.id })).then((r) => r && setSegments(r.segments));
  useEffect(() => {
    if (expanded) loadSegments();
  }, [expanded, card.segments, card.status]);
  const elapsed = card.startedAt ? formatDuration((card.endedAt ?? now) - card.startedAt) : undefined;
  // An action that sends one request about this card's task (its test id is the request's name unless told).
  const requestButton = (
    request: 'pause' | 'openTerminal' | 'cancel' | 'delete',
    icon: string,
    label: string,
    testid: string = request,
  ) => <ActionButton testid={testid} icon={icon} label={label} onClick={() => void act(channel.request(request, { taskId: card.id }))} />;
  const phase = phaseLabel(card, now || Date.now());
  // A finished card shows its outcome's label and icon (src/core/outcome.ts), as History and the notifications do.
  const finished = card.phase === 'completed' || card.phase === 'failed' || card.phase === 'cancelled';
  // The parts a card mostly lacks are left out here rather than rendering nothing: at 1000 tasks,
  // a component per absent part on each card cost more than the cards' own elements.
  return (
    <li
      class={`card ${card.phase}${finished ? ` outcome-${card.outcome.tone}` : ''}`}
      data-testid={`card-${card.id}`}
      data-phase={card.phase}
      data-outcome={card.outcome.kind}
      aria-label={`${card.title}: ${phase}`}
    >
      <div class="card-head">
        <button
          type="button"
          class="icon expand"
          data-testid="expand"
          aria-expanded={expanded}
          aria-controls={detailsId}
          title={expanded ? 'Hide details' : 'Show details and segments'}
          onClick={() => setExpanded(!expanded)}
        >
          <span class={`codicon codicon-chevron-${expanded ? 'down' : 'right'}`} aria-hidden="true" />
        </button>
        <span class={`phase-icon codicon codicon-${finished ? card.outcome.icon : PHASE_ICONS[card.phase]}`} aria-hidden="true" />
        <span class="title" title={`${card.title} (Task ${card.shortId})`} data-testid="title">
          {card.title}
        </span>
        {isNew && (
          <span class="new-mark" data-testid="new-mark" title="A result you have not seen yet">
            New
          </span>
        )}
        {card.followUpOfTitle != null && <FollowUpMark title={card.followUpOfTitle} />}
        <span class={`phase ${card.phase}`} data-testid="phase">
          {phase}
        </span>
        {card.refusals && <RefusalMark refusals={card.refusals} />}
        {elapsed && (
          <span class="elapsed" data-testid="elapsed" title={card.endedAt ? 'How long it took' : 'Running for'}>
            {elapsed}
          </span>
        )}
        {card.usage && <UsageTotal usage={card.usage} />}
        {card.withFollowUps && <FollowUpsSpend usage={card.withFollowUps} />}
        <span class="actions" role="group" aria-label="Task actions">
          {card.actions.pause && requestButton('pause', 'debug-pause', 'Pause')}
          {card.actions.continue && (
            <ActionButton
              testid="continue"
              icon="debug-continue"
              label="Continue"
              onClick={() =>
                void act(channel.request('continue', { taskId: card.id })).then((r) => {
                  if (r?.ticket === 'retake_pending')
                    onMessage(
                      `"${card.title}" is queued again, but no new ticket could be taken yet${r.error ? ` (${r.error})` : ''}; it is retried automatically.`,
                    );
                  else onMessage(undefined);
                })
              }
            />
          )}
          {card.actions.edit && <ActionButton testid="edit" icon="edit" label="Edit" onClick={() => setEditing(true)} />}
          {card.startedAt != null && requestButton('openTerminal', 'terminal', 'Terminal', 'terminal')}
          {(card.actions.openSession || card.actions.followUp) && (
            <SessionButtons
              taskId={card.id}
              openSession={card.actions.openSession}
              followUp={card.actions.followUp}
              act={act}
              channel={channel}
              onFollowUp={() => setFollowingUp(true)}
            />
          )}
          {card.workplace?.reviewable && <ReviewButton taskId={card.id} show act={act} channel={channel} />}
          {card.actions.cancel && requestButton('cancel', 'stop-circle', 'Cancel')}
          {card.actions.delete && requestButton('delete', 'trash', 'Delete')}
        </span>
      </div>
      {followingUp && (
        <FollowUpForm
          taskId={card.id}
          taskTitle={card.title}
          act={act}
          channel={channel}
          onMessage={onMessage}
          onDone={() => setFollowingUp(false)}
        />
      )}
      {card.ask && (
        <AskPrompt
          key={card.ask.id}
          ask={card.ask}
          taskId={card.id}
          now={now}
          act={act}
          channel={channel}
          onMessage={(text) => onMessage(text, { taskId: card.id, phase: card.phase, status: card.status, askId: card.ask!.id })}
        />
      )}
      {card.scheduleRun && <ScheduleRunLine run={card.scheduleRun} />}
      {card.gatewayUnreachableSince !== null && <GatewayOutageLine since={card.gatewayUnreachableSince} />}
      {card.usageLimitResetAt != null && <UsageLimitLine resetAt={card.usageLimitResetAt} now={now} />}
      {card.failureReason && (
        <div class="failure" data-testid="failure">
          {card.failureReason}
        </div>
      )}
      {!card.failureReason && card.lastError && <div class="last-error">{card.lastError}</div>}
      {card.allowedNotRun && (
        <AllowedNotRunLine notRun={card.allowedNotRun} onFollowUp={card.actions.followUp ? () => setFollowingUp(true) : undefined} />
      )}
      {card.check && <CheckLine check={card.check} />}
      {card.workplace && <WorkplaceBlock card={card} act={act} channel={channel} onMessage={(m) => onMessage(m)} />}
      {expanded && (
        <div class="details" id={detailsId} data-testid="details">
          <PromptText prompt={card.prompt} />
          <div class="meta">
            <span title={card.workspacePath}>
              <span class="codicon codicon-folder" aria-hidden="true" /> {card.workspacePath.split(/[\\/]/).pop()}
            </span>
            {card.model && <span>{card.model}</span>}
            <span>{PERMISSION_MODE_CHOICES.find((m) => m.value === card.permissionMode)?.label}</span>
            <span data-testid="short-id" title="Away notifications name the task by this id">
              Task {card.shortId}
            </span>
            <span>Queued {formatTime(card.queuedAt)}</span>
            {card.filesChanged != null ? (
              <span>{filesChangedText(card.filesChanged)}</span>
            ) : (
              (card.phase === 'completed' || card.phase === 'failed') && <span>Files changed: unknown</span>
            )}
            <FollowUpMark title={card.followUpOfTitle} />
          </div>
          <Segments segments={segments} />
          <QuestionList
            taskId={card.id}
            channel={channel}
            reloadKey={`${card.status}:${card.ask?.id ?? ''}:${card.refusals?.denied ?? 0}`}
          />
        </div>
      )}
      {editing && (
        <TaskForm
          workspaces={[{ name: card.workspacePath, path: card.workspacePath }]}
          models={models}
          defaultModelText={defaultModelText}
          focusTick={1}
          initial={card}
          submit={async (input) => {
            await channel.request('editTask', {
              taskId: card.id,
              patch: {
                title: input.title,
                prompt: input.prompt,
                permissionMode: input.permissionMode,
                model: input.model,
                thoughtLevel: input.thoughtLevel,
                // Sent only when moved: a task that took its ticket meanwhile keeps the other edits.
                ...(card.notBefore !== undefined &&
                (input.notBefore === undefined ? '' : localDateTimeText(input.notBefore)) !== localDateTimeText(card.notBefore)
                  ? { notBefore: input.notBefore ?? null }
                  : {}),
              },
            });
          }}
          onError={onError}
          onDone={() => setEditing(false)}
        />
      )}
    </li>
  );
}

/** The task's prompt; a long one folds after PROMPT_FOLD_LINES lines behind "Show all". */
export function PromptText({ prompt }: { prompt: string }) {
  const [all, setAll] = useState(false);
  const folded = foldPrompt(prompt);
  return (
    <>
      <p class="prompt" data-testid="prompt-text">
        {all ? prompt : folded.text}
      </p>
      {folded.hiddenLines > 0 && (
        <button type="button" class="more" data-testid="prompt-show-all" aria-expanded={all} onClick={() => setAll(!all)}>
          {all ? 'Show less' : `Show all (${folded.hiddenLines} more lines)`}
        </button>
      )}
    </>
  );
}
