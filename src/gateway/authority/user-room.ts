// What a user may still take: the rolling quota and the live-ticket limit, with when each grows
// again, and the availability answer made from them.
import type { AvailabilityResponse } from '../../protocol/gateway';
import type { GatewayUser } from '../http/auth';
import type { TicketStore } from '../stores/store';
import { isEligible, isExposed, type AuthorityPolicy } from './authority-policy';
import { effectiveTicket } from './ticket-view';

export interface UserRoom {
  quotaLeft: number;
  quotaNextAt: number | null;
  liveLeft: number;
  liveNextAt: number | null;
}

/** Room left for `user`: quota and live-ticket limits, with when it grows again. */
export async function userRoom(store: TicketStore, policy: AuthorityPolicy, user: GatewayUser, now: number): Promise<UserRoom> {
  const times = await store.takeTimesSince(user.id, now - policy.quotaWindowMs + 1);
  const quotaLeft = Math.max(0, policy.takesPerWindow - times.length);
  // The oldest take that must age out before one more fits.
  const blocking = times[times.length - policy.takesPerWindow];
  const quotaNextAt = quotaLeft === 0 && blocking !== undefined ? blocking + policy.quotaWindowMs : null;
  const live = (await store.liveForUser(user.id))
    .map((t) => effectiveTicket(t, now))
    .filter((t) => t.state === 'queued' || t.state === 'ready' || t.state === 'active');
  const liveLeft = Math.max(0, policy.maxLiveTicketsPerUser - live.length);
  const deadlines = live
    .map((t) => (t.state === 'ready' ? t.readyDeadline : t.state === 'active' ? t.activeUntil : null))
    .filter((d): d is number => d !== null);
  const liveNextAt = liveLeft === 0 && deadlines.length > 0 ? Math.min(...deadlines) : null;
  return { quotaLeft, quotaNextAt, liveLeft, liveNextAt };
}

/** Whether `user` can take a ticket now, how many, and if not, why and from when. */
export async function takeAvailability(
  store: TicketStore,
  policy: AuthorityPolicy,
  user: GatewayUser,
  now: number,
): Promise<AvailabilityResponse> {
  if (!isExposed(policy, user)) return { server_time: now, can_take: false, can_take_number: 0, next_take_at: null, reason: 'disabled' };
  if (!isEligible(policy, user))
    return { server_time: now, can_take: false, can_take_number: 0, next_take_at: null, reason: 'not_eligible' };
  const room = await userRoom(store, policy, user, now);
  const number = Math.min(room.quotaLeft, room.liveLeft);
  if (number > 0) return { server_time: now, can_take: true, can_take_number: number, next_take_at: null, reason: null };
  if (room.quotaLeft === 0) {
    // Both limits may bind: the later of the two times is when a take can succeed.
    const next =
      room.liveLeft === 0 && room.liveNextAt !== null && room.quotaNextAt !== null
        ? Math.max(room.quotaNextAt, room.liveNextAt)
        : room.liveLeft === 0
          ? null
          : room.quotaNextAt;
    return { server_time: now, can_take: false, can_take_number: 0, next_take_at: next, reason: 'quota' };
  }
  return { server_time: now, can_take: false, can_take_number: 0, next_take_at: room.liveNextAt, reason: 'live_limit' };
}
