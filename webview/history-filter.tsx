// The History filter box (docs/flows.md#archive): text in the title or prompt, an outcome or its group
// (docs/flows.md#outcomes), a date range. It searches the task DB's and the archive's rows (the host answers `historyPage`).
import type { HistoryFilterView } from '../src/protocol/webview';
import { HISTORY_FILTERS } from '../src/core/outcome';
import { valueOf } from './field-value';

/** The filter with its empty parts left out; undefined when nothing is asked. */
export function activeFilter(filter: HistoryFilterView): HistoryFilterView | undefined {
  const out: HistoryFilterView = {};
  if (filter.text?.trim()) out.text = filter.text.trim();
  if (filter.status) out.status = filter.status;
  if (filter.from !== undefined) out.from = filter.from;
  if (filter.to !== undefined) out.to = filter.to;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A date field's `YYYY-MM-DD` as local time: the day's start (from) or its last millisecond (to). */
export function dayBound(value: string, end: boolean): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const ms = new Date(`${value}T${end ? '23:59:59.999' : '00:00:00'}`).getTime();
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

export function HistoryFilterBox({ filter, onChange }: { filter: HistoryFilterView; onChange(next: HistoryFilterView): void }) {
  // The range's two ends: "from" takes the day's start, "to" its last millisecond.
  const dateField = (bound: 'from' | 'to', label: string) => (
    <vscode-textfield
      type="date"
      data-testid={`history-filter-${bound}`}
      aria-label={label}
      label={label}
      title={label}
      onChange={(e) => onChange({ ...filter, [bound]: dayBound(valueOf(e), bound === 'to') })}
    />
  );
  return (
    <div class="history-filter" role="search" data-testid="history-filter">
      <vscode-textfield
        type="search"
        data-testid="history-filter-text"
        aria-label="Filter History by title or prompt"
        label="Filter History by title or prompt"
        placeholder="Filter by title or prompt"
        value={filter.text ?? ''}
        onInput={(e) => onChange({ ...filter, text: valueOf(e) })}
      >
        <span slot="content-before" class="codicon codicon-search" aria-hidden="true" />
      </vscode-textfield>
      <vscode-single-select
        data-testid="history-filter-status"
        aria-label="Status"
        label="Status"
        value={filter.status ?? ''}
        onChange={(e) => onChange({ ...filter, status: (valueOf(e) || undefined) as HistoryFilterView['status'] })}
      >
        <vscode-option value="">Any status</vscode-option>
        {HISTORY_FILTERS.map((f) => (
          <vscode-option key={f.key} value={f.key}>
            {f.label}
          </vscode-option>
        ))}
      </vscode-single-select>
      {dateField('from', 'Triggered from')}
      {dateField('to', 'Triggered until')}
    </div>
  );
}
