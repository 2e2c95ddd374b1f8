// The account at a glance (docs/flows.md#capacity-and-cost): a subscription account's 5-hour and
// weekly windows from the last answer's headers, each a bar with its reset, the reserve as a mark
// on both, the reading's age, and why the queue waits. Worded by the host (src/core/account-bar.ts).
import type { PanelState } from '../src/protocol/webview';

type AccountBarView = NonNullable<PanelState['account']>;

export function AccountBar({ account }: { account: AccountBarView }) {
  return (
    <section class="account-bar" data-testid="account-bar" aria-label="Your account's usage windows">
      {account.windows.map((w) => (
        <div
          class={`account-window${w.overReserve ? ' over' : ''}`}
          data-testid={`account-${w.label === '5 h' ? '5h' : 'week'}`}
          key={w.label}
        >
          <span class="account-label">{w.label}</span>
          <span
            class="account-meter"
            role="meter"
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={w.percent}
            aria-label={`${w.label} window ${w.percent} % used`}
          >
            <span class="account-fill" style={{ width: `${w.percent}%` }} />
            {account.reservePercent !== null && (
              <span
                class="account-reserve"
                data-testid="account-reserve"
                style={{ left: `${account.reservePercent}%` }}
                title={`Your reserve: ${account.reservePercent} %`}
              />
            )}
          </span>
          <span class="account-text">
            {w.percent} %{w.resetText ? ` · ${w.resetText}` : ''}
          </span>
        </div>
      ))}
      <div class="account-meta">
        <span data-testid="account-age">{account.ageText}</span>
        {account.holdingText && (
          <span class="account-holding" data-testid="account-holding" role="status">
            {' · '}
            {account.holdingText}
          </span>
        )}
      </div>
    </section>
  );
}
