// The create form's "After" field (docs/flows.md#schedules-and-chains): the tasks a new one may wait
// for, each told apart by where it stands and its short id, newest first (the task just queued is the
// one most often followed), in a list that opens above the field when there is no room below.
import type { TaskCard } from '../src/protocol/webview';
import { valueOf } from './field-value';
import { phaseLabel } from './format';

export interface AfterChoice {
  id: string;
  /** "Fix the build · In queue · #2 · 4ea89496": same-titled tasks differ by state and short id. */
  label: string;
}

/**
 * The tasks a new one may wait for, newest first: not failed, cancelled or skipped, and not a check
 * that failed (a step after it would only be skipped: docs/flows.md#checks).
 */
export function afterChoicesOf(tasks: readonly TaskCard[], now: number): AfterChoice[] {
  return tasks
    .filter((t) => t.status !== 'failed' && t.status !== 'cancelled' && t.outcome.kind !== 'check_failed')
    .sort((a, b) => b.queuedAt - a.queuedAt)
    .map((t) => ({ id: t.id, label: `${t.title} · ${phaseLabel(t, now)} · ${t.shortId}` }));
}

/** The height of vscode-single-select's list: 22 px an option, at most 10 shown, plus its border. */
const listHeight = (options: number) => Math.min(options, 10) * 22 + 4;

/** Opens the list above the field when it would run off the panel's bottom and there is more room above. */
function placeList(select: HTMLElement & { position?: 'above' | 'below' }, options: number): void {
  const rect = select.getBoundingClientRect();
  const below = document.documentElement.clientHeight - rect.bottom;
  select.position = below < listHeight(options) && rect.top > below ? 'above' : 'below';
}

export function AfterField({
  choices,
  value,
  onChange,
  inItsBranch,
  onInItsBranch,
}: {
  choices: AfterChoice[];
  value: string;
  onChange(id: string): void;
  inItsBranch: boolean;
  onInItsBranch(value: boolean): void;
}) {
  const place = (e: Event) => placeList(e.currentTarget as HTMLElement, choices.length + 1);
  return (
    <div class="after-task">
      <vscode-label>After</vscode-label>
      <vscode-single-select
        data-testid="after-task"
        value={value}
        onMouseDown={place}
        onKeyDownCapture={place}
        onChange={(e) => onChange(valueOf(e))}
      >
        {/* `selected` on the option, not only `value`: a changed list re-reads the options and would show the first. */}
        <vscode-option value="" selected={value === ''}>
          No other task
        </vscode-option>
        {choices.map((t) => (
          <vscode-option key={t.id} value={t.id} selected={t.id === value}>
            {t.label}
          </vscode-option>
        ))}
      </vscode-single-select>
      <span class="hint" data-testid="after-hint">
        Newest first.
      </span>
      {value && (
        <label class="in-its-branch" data-testid="continue-in-branch">
          <input type="checkbox" checked={inItsBranch} onChange={(e) => onInItsBranch((e.target as HTMLInputElement).checked)} /> Continue
          in its branch
          <span class="hint"> (taken once it completed; skipped if it fails)</span>
        </label>
      )}
    </div>
  );
}
