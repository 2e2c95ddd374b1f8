// A task's check on its card and History row (docs/flows.md#checks): where its rounds stand in one
// line, the command whole, and the last run's output one click away. Plain text (JSX escapes it).
import { useState } from 'preact/hooks';
import type { CheckView } from '../src/protocol/check-view';

/** "Ready for review · checks pass (npm test, round 2)", "Check failed after 2 rounds", … */
export function checkText(check: CheckView): string {
  const rounds = (n: number) => `${n} round${n === 1 ? '' : 's'}`;
  switch (check.state) {
    case 'passed':
      return `Ready for review · checks pass (${check.command}, round ${check.round})`;
    case 'failed':
      return `Check failed after ${rounds(check.round)} (${check.command}${check.exitCode === null ? ', stopped' : `, exit code ${check.exitCode}`})`;
    case 'checking':
      return `Checking (round ${check.round}): ${check.command}`;
    case 'fixing':
      return `Check failed in round ${check.round}: the agent is fixing it (${check.command})`;
    case 'pending':
      return `Check after the agent's turn: ${check.command}`;
    case 'skipped':
      return `Check skipped: the agent changed what it runs and it was not allowed to run (${check.command})`;
  }
}

/** The flag of a check whose files the agent changed: it runs outside the permission mode (docs/flows.md#checks). */
export function checkFlagText(check: CheckView): string | null {
  if (!check.agentChanged?.length) return null;
  const shown =
    check.agentChanged.slice(0, 5).join(', ') + (check.agentChanged.length > 5 ? ` and ${check.agentChanged.length - 5} more` : '');
  return `The agent changed what this check runs (${shown}); it runs outside the permission mode`;
}

export function CheckLine({ check }: { check: CheckView | undefined }) {
  const [open, setOpen] = useState(false);
  if (!check) return null;
  const output = check.output;
  const flag = checkFlagText(check);
  return (
    <div class={`check-line ${check.state}`} data-testid="check-line" data-state={check.state}>
      <span
        class={`codicon codicon-${check.state === 'passed' ? 'pass' : check.state === 'failed' ? 'error' : check.state === 'skipped' ? 'debug-step-over' : 'beaker'}`}
        aria-hidden="true"
      />
      <span class="check-text" data-testid="check-text">
        {checkText(check)}
      </span>
      {flag && (
        <span class="check-flag" data-testid="check-flag" role="note">
          <span class="codicon codicon-warning" aria-hidden="true" /> {flag}
        </span>
      )}
      {output !== null && (
        <button type="button" class="more" data-testid="check-output-toggle" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Hide output' : 'Output'}
        </button>
      )}
      {open && output !== null && (
        <pre class="check-output" data-testid="check-output">
          {output || '(no output)'}
        </pre>
      )}
    </div>
  );
}
