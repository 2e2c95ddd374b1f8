// The views the panel's backend makes of the service's state: the create area's availability,
// what saving an API key found, a task's segments and its questions.
import type { TicketRecord } from '../core/types';
import type { OffPeakWindow } from '../gateway-client/client';
import type { AvailabilityState } from '../service';
import type { QuestionRecord } from '../store';
import type { AvailabilityView, QuestionView, SegmentView } from '../protocol/webview';
import type { PanelClientConfigs } from './host-bits';

const REASONS: Record<string, string> = {
  quota: 'The off-peak ticket quota is used up for now.',
  live_limit: 'You already hold as many live tickets as the gateway allows; one must finish first.',
  limit_reached: 'The gateway refused a new ticket: a limit was reached.',
  disabled: 'The gateway is not handing out off-peak tickets right now.',
  not_eligible: 'Your plan does not include off-peak tasks.',
  unavailable: 'No off-peak ticket can be taken right now.',
};

/** Adds when the closed off-peak windows open (queued tasks wait for that) to the create area's view. */
export function withOffPeakWindow(view: AvailabilityView, window: OffPeakWindow | undefined): AvailabilityView {
  return window && !window.open ? { ...view, offPeakOpensAt: window.opensAt } : view;
}

export function availabilityView(
  state: AvailabilityState,
  configs: PanelClientConfigs | undefined,
  health: { lastSuccessAt?: number; nextCheckAt?: number } = {},
): AvailabilityView {
  if (configs && !configs.exposed) {
    return { kind: 'hidden', canCreate: false, reason: 'Off-peak tasks are not available for your account yet.' };
  }
  const planLocked = (configs && !configs.planEligible) || (state.status === 'disabled' && state.reason === 'not_eligible');
  if (planLocked) {
    return {
      kind: 'plan_locked',
      canCreate: false,
      reason: REASONS.not_eligible,
      upgradeHint: configs?.upgradeHint ?? undefined,
      upgradeUrl: configs?.upgradeUrl ?? undefined,
    };
  }
  switch (state.status) {
    case 'enabled':
      return { kind: 'enabled', canCreate: true, canTakeNumber: state.canTakeNumber, lastSuccessAt: health.lastSuccessAt };
    case 'disabled':
      return {
        kind: 'limited',
        canCreate: false,
        reason: REASONS[state.reason] ?? REASONS.unavailable,
        nextTakeAt: state.nextTakeAt,
        lastSuccessAt: health.lastSuccessAt,
        nextCheckAt: health.nextCheckAt,
      };
    case 'error':
      if (state.refusedStatus !== undefined) {
        return {
          kind: 'key_refused',
          canCreate: false,
          reason: `The gateway refused the API key (${state.refusedStatus}).`,
          refusedStatus: state.refusedStatus,
          lastSuccessAt: health.lastSuccessAt,
          nextCheckAt: health.nextCheckAt,
        };
      }
      return {
        kind: 'unreachable',
        canCreate: false,
        // The service words a gateway failure as "the gateway could not be reached (…)": one sentence, not two.
        reason: state.message.startsWith('the gateway ')
          ? `T${state.message.slice(1)}.`
          : `The gateway cannot be reached (${state.message}).`,
        lastSuccessAt: health.lastSuccessAt,
        nextCheckAt: health.nextCheckAt,
      };
    case 'unknown':
      return { kind: 'checking', canCreate: false, reason: 'Checking whether a ticket can be taken…' };
  }
}

/** What saving an API key found: the gateway accepted it, refused it, or could not be asked. */
export function apiKeyCheck(state: AvailabilityState): { accepted: boolean | null; text: string } {
  switch (state.status) {
    case 'enabled':
    case 'disabled':
      return { accepted: true, text: 'The gateway accepted the API key.' };
    case 'error':
      return state.refusedStatus !== undefined
        ? { accepted: false, text: `The gateway refused the API key (${state.refusedStatus}). Check the key and set it again.` }
        : { accepted: null, text: `The API key is saved, but the gateway could not be reached to check it (${state.message}).` };
    case 'unknown':
      return { accepted: null, text: 'The API key is saved; it is checked at the next gateway answer.' };
  }
}

export function segmentView(t: TicketRecord): SegmentView {
  return {
    ordinal: t.ordinal,
    ticketId: t.ticketId,
    serverState: t.serverState,
    queuedAt: t.takenAt,
    readyAt: t.readyAt,
    admittedAt: t.activeAt,
    startedAt: t.segmentStartedAt,
    endedAt: t.segmentEndedAt,
    endReason: t.endReason,
    usage: t.usage,
  };
}

export function questionView(q: QuestionRecord): QuestionView {
  return {
    askId: q.askId,
    tool: q.tool,
    summary: q.summary,
    askedAt: q.askedAt,
    parkedAt: q.parkedAt,
    decision: q.decision,
    answeredBy: q.answeredBy,
    answeredAt: q.answeredAt,
  };
}
