// The Schedules section (docs/flows.md#schedules-and-chains): per schedule its title, its rule in
// words, the next run ("Next: Tue 02:00" or "Paused"), the last run and its result, and Pause or
// Resume, Edit (its future runs) and Delete (asked first). Titles and results are plain text.
import { useState } from 'preact/hooks';
import type { ScheduleView } from '../src/protocol/schedules';
import type { PanelState } from '../src/protocol/webview';
import type { Act } from './act';
import { ActionButton } from './action-button';
import type { HostChannel } from './host-channel';
import { formatTime } from './format';
import { TaskForm } from './task-form';

/** "Next: Tue 02:00", "Paused", or "No next run" (a schedule the host could not place). */
export function nextRunLabel(s: Pick<ScheduleView, 'paused' | 'nextRunText'>): string {
  if (s.paused) return 'Paused';
  return s.nextRunText ? `Next: ${s.nextRunText}` : 'No next run';
}

/** "Last: Completed", "Last: Missed 3, caught up · Completed" (the host's words; a catch-up says so there). */
export function lastRunLabel(lastRun: ScheduleView['lastRun']): string | null {
  return lastRun ? `Last: ${lastRun.text}` : null;
}

export function Schedules({
  schedules,
  workspaces,
  models,
  defaultModelText,
  zoneText,
  act,
  channel,
  onError,
}: {
  schedules: ScheduleView[];
  workspaces: PanelState['workspaces'];
  models: string[];
  defaultModelText?: string;
  zoneText: string;
  act: Act;
  channel: HostChannel;
  onError(message: string | undefined): void;
}) {
  const [editing, setEditing] = useState<string>();
  if (schedules.length === 0) return null;
  return (
    <section class="section schedules" aria-labelledby="section-schedules" data-testid="schedules">
      <h2 id="section-schedules">
        <span class="codicon codicon-calendar" aria-hidden="true" /> <span class="heading-text">Schedules</span>{' '}
        <vscode-badge variant="counter">{schedules.length}</vscode-badge>
      </h2>
      <ul class="schedule-rows" role="list">
        {schedules.map((s) => {
          const last = lastRunLabel(s.lastRun);
          return (
            <li
              key={s.id}
              class={`schedule-row${s.paused ? ' paused' : ''}`}
              data-testid={`schedule-${s.id}`}
              aria-label={`${s.title}: ${s.ruleText}, ${nextRunLabel(s)}`}
            >
              <div class="schedule-head">
                <span class="title" title={s.title} data-testid="schedule-title">
                  {s.title}
                </span>
                <span class="rule" data-testid="schedule-rule">
                  {s.ruleText}
                </span>
                <span class="next" data-testid="schedule-next">
                  {nextRunLabel(s)}
                </span>
                <span class="actions" role="group" aria-label="Schedule actions">
                  {s.paused ? (
                    <ActionButton
                      testid="schedule-resume"
                      icon="debug-continue"
                      label="Resume"
                      onClick={() => void act(channel.request('pauseSchedule', { id: s.id, paused: false }))}
                    />
                  ) : (
                    <ActionButton
                      testid="schedule-pause"
                      icon="debug-pause"
                      label="Pause"
                      onClick={() => void act(channel.request('pauseSchedule', { id: s.id, paused: true }))}
                    />
                  )}
                  <ActionButton
                    testid="schedule-edit"
                    icon="edit"
                    label="Edit"
                    onClick={() => setEditing(editing === s.id ? undefined : s.id)}
                  />
                  <ActionButton
                    testid="schedule-delete"
                    icon="trash"
                    label="Delete"
                    onClick={() => void act(channel.request('deleteSchedule', { id: s.id }))}
                  />
                </span>
              </div>
              {last && (
                <div class="last-run" data-testid="schedule-last" title={`Due ${formatTime(s.lastRun!.at)}`}>
                  {last}
                </div>
              )}
              {editing === s.id && (
                <TaskForm
                  key={s.id}
                  workspaces={workspaces}
                  models={models}
                  defaultModelText={defaultModelText}
                  zoneText={zoneText}
                  focusTick={1}
                  schedule={s}
                  submit={async () => false}
                  submitSchedule={async (draft, rule) => {
                    const { done } = await channel.request('editSchedule', { id: s.id, draft, rule });
                    if (!done) return false; // declined: keep what was typed
                  }}
                  onError={onError}
                  onDone={() => setEditing(undefined)}
                />
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
