// The morning summary at the top of the panel: what happened since the user last looked
// ("Since 18:40: 3 completed, 1 check failed after 2 rounds, 1 needs input, 1 failed, 14 files changed"), each part a filter
// of the cards. The wording is src/panel/task-summary.ts's, the same as the status bar tooltip's.
import { Fragment } from 'preact';
import type { ResultsSummary, SummaryFilter } from '../src/panel/task-summary';
import { sinceText } from '../src/panel/task-summary';

export interface CardFilter {
  filter: SummaryFilter;
  text: string;
  taskIds: ReadonlySet<string>;
}

export function ResultsSummaryBar({
  summary,
  now,
  active,
  onFilter,
}: {
  summary: ResultsSummary;
  now: number;
  active: CardFilter | undefined;
  onFilter(filter: CardFilter | undefined): void;
}) {
  return (
    <div class="summary" role="status" data-testid="summary">
      <span class="codicon codicon-bell-dot" aria-hidden="true" /> <span data-testid="summary-since">{sinceText(summary.since, now)}:</span>
      {summary.parts.map((part, i) => (
        <Fragment key={part.filter}>
          {i > 0 && (
            <span class="separator" aria-hidden="true">
              ,
            </span>
          )}
          <button
            type="button"
            class={`summary-part ${part.filter}`}
            data-testid={`summary-${part.filter}`}
            aria-pressed={active?.filter === part.filter}
            title={`Show only these ${part.filter === 'files_changed' ? 'tasks' : 'cards'}`}
            onClick={() =>
              onFilter(
                active?.filter === part.filter ? undefined : { filter: part.filter, text: part.text, taskIds: new Set(part.taskIds) },
              )
            }
          >
            {part.text}
          </button>
        </Fragment>
      ))}
      {active && (
        <>
          {' '}
          <button type="button" class="summary-clear" data-testid="summary-clear" onClick={() => onFilter(undefined)}>
            Show all tasks
          </button>
        </>
      )}
    </div>
  );
}
