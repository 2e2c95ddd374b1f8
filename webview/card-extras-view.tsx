// Card parts about the task's segments, kept out of app.tsx: the gateway-outage line, the
// schedule a run was queued by, and the token usage (card total, per segment, History total).
import type { TaskCard, UsageView } from '../src/protocol/webview';
import { spendDetail, spendOf, spendText } from '../src/core/spend';
import { gatewayOutageText, usageDetail, usageLimitText, usageSummary } from './card-extras';

/** A running task whose requests wait for an unreachable gateway (they are held, the task has not failed). */
export function GatewayOutageLine({ since }: { since: number | null }) {
  if (since === null) return null;
  return (
    <div class="gateway-outage" data-testid="gateway-outage" role="status">
      <span class="codicon codicon-debug-disconnect" aria-hidden="true" /> {gatewayOutageText(since)}
    </div>
  );
}

/** A schedule's run (docs/flows.md#schedules-and-chains): "Nightly deps · Tue 02:00 (catch-up)". The title is plain text. */
export function ScheduleRunLine({ run }: { run: TaskCard['scheduleRun'] }) {
  if (!run) return null;
  return (
    <div
      class="schedule-run"
      data-testid="schedule-run"
      title={run.catchUp ? 'A catch-up run: the machine was asleep or VS Code closed when it was due' : 'Queued by this schedule'}
    >
      <span class="codicon codicon-calendar" aria-hidden="true" /> {run.scheduleTitle} · {run.dueText}
      {run.catchUp && (
        <span class="catch-up" data-testid="catch-up">
          {' '}
          (catch-up)
        </span>
      )}
    </div>
  );
}

/** A task the account's usage limit holds (or parked until its reset): when it resets, and how long until then. */
export function UsageLimitLine({ resetAt, now }: { resetAt: number | null | undefined; now: number }) {
  const text = resetAt == null ? null : usageLimitText(resetAt, now);
  if (text === null) return null;
  return (
    <div class="gateway-outage usage-limit" data-testid="usage-limit" role="status">
      <span class="codicon codicon-watch" aria-hidden="true" /> {text}
    </div>
  );
}

/** The tokens a task (or a History row) used in total; nothing before the first answer. */
export function UsageTotal({ usage, testid = 'usage' }: { usage: UsageView | null; testid?: string }) {
  if (!usage) return null;
  const spend = spendOf(usage);
  const detail = [spend ? spendDetail(spend) : '', usageDetail(usage)].filter(Boolean).join('\n');
  return (
    <span class="usage" data-testid={testid} title={detail} aria-label={detail}>
      <span class="codicon codicon-symbol-numeric" aria-hidden="true" />{' '}
      {spend && (
        <>
          <span class="spend" data-testid={`${testid}-spend`}>
            {spendText(spend)}
          </span>
          {' · '}
        </>
      )}
      {usageSummary(usage)}
    </span>
  );
}

/** One segment's tokens in the expanded card's table. */
export function SegmentUsageCell({ usage }: { usage: UsageView | null }) {
  if (!usage) return <td data-testid="segment-usage">—</td>;
  return (
    <td data-testid="segment-usage" title={usageDetail(usage)}>
      {usageSummary(usage)}
    </td>
  );
}

/** What the task and its follow-ups spent together (docs/flows.md#capacity-and-cost); nothing when no unit applies. */
export function FollowUpsSpend({ usage }: { usage: UsageView }) {
  const spend = spendOf(usage);
  if (!spend) return null;
  return (
    <span class="usage" data-testid="follow-ups-spend" title={spendDetail(spend)}>
      with follow-ups: {spendText(spend)}
    </span>
  );
}
