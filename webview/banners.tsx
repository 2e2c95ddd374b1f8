// The notices above the create area: gateway health, the plan lock, the availability hint.
import type { AvailabilityView, SetupView } from '../src/protocol/webview';
import { availabilityText, formatAgo, formatDuration, setupRunsText } from './format';

export function GatewayHealth({
  availability: a,
  now,
  hasQueued,
  onSetApiKey,
}: {
  availability: AvailabilityView;
  now: number;
  hasQueued: boolean;
  onSetApiKey(): void;
}) {
  if (a.kind === 'key_refused') {
    // The gateway answered: it is not an outage, and no retry fixes it; a new key does.
    return (
      <div class="warning" role="alert" data-testid="key-refused">
        <span class="codicon codicon-key" aria-hidden="true" /> The gateway refused the API key ({a.refusedStatus ?? 401}).{' '}
        <vscode-button secondary data-testid="key-refused-set" onClick={onSetApiKey}>
          Set API key…
        </vscode-button>
      </div>
    );
  }
  if (a.kind !== 'unreachable') return null;
  return (
    <div class="warning" role="status" data-testid="gateway-health">
      <span class="codicon codicon-warning" aria-hidden="true" /> The gateway cannot be reached
      {hasQueued ? ': queue positions may be out of date' : ''}.
      {a.lastSuccessAt !== undefined && <> Last reached {formatAgo(a.lastSuccessAt, now)}.</>}
      {a.nextCheckAt !== undefined && <> Next try {a.nextCheckAt > now ? `in ${formatDuration(a.nextCheckAt - now + 999)}` : 'now'}.</>}
    </div>
  );
}

export function PlanLock({ availability: a }: { availability: AvailabilityView }) {
  return (
    <div class="notice plan-lock" data-testid="plan-lock" role="status">
      <span class="codicon codicon-lock" aria-hidden="true" /> {a.upgradeHint ?? a.reason}
      {a.upgradeUrl && /^https?:\/\//.test(a.upgradeUrl) && (
        <>
          {' '}
          <a href={a.upgradeUrl} data-testid="upgrade-link">
            Upgrade your plan
          </a>
        </>
      )}
    </div>
  );
}

export function AvailabilityHint({ availability, now, hasApiKey }: { availability: AvailabilityView; now: number; hasApiKey: boolean }) {
  const text = !hasApiKey ? 'Set an API key first.' : availabilityText(availability, now);
  if (!text) return null;
  return (
    <span class="hint" data-testid="availability" role="status">
      {text}
    </span>
  );
}

/** What will happen to a task queued now: mode · agent · whose credential · model API · when tasks run. */
export function SetupLine({ setup, now }: { setup: SetupView; now: number }) {
  const parts: [string, string][] = [
    ['mode', setup.modeText],
    ['agent', setup.agentText],
    ['credential', setup.credentialText],
    ...(setup.modelApiHost ? [['model-api', setup.modelApiHost] as [string, string]] : []),
    ['runs', setupRunsText(setup, now)],
  ];
  return (
    <p class="setup-line hint" data-testid="setup-line" data-mode={setup.mode}>
      {parts.map(([name, text], i) => (
        <span key={name} data-testid={`setup-${name}`}>
          {i > 0 ? ' · ' : ''}
          {text}
        </span>
      ))}
      {setup.missing && (
        <span class="setup-missing" data-testid="setup-missing">
          {' '}
          {setup.missing}
        </span>
      )}
      {setup.remoteText && (
        <span class="setup-remote" data-testid="setup-remote">
          {' '}
          {setup.remoteText}
        </span>
      )}
    </p>
  );
}
