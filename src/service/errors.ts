/** Errors the task service reports to the UI: one code per thing the user can act on. */
import { isGatewayError, type GatewayError } from '../gateway-client/errors';

export type ServiceErrorCode =
  /** No gateway API key is set: nothing was sent, nothing stored. */
  | 'no_api_key'
  /** 3101: the plan is not eligible. */
  | 'not_eligible'
  /** 3103 (or the availability snapshot says so): `nextTakeAt` tells when to try again. */
  | 'limit_reached'
  /** The gateway could not be reached or answered badly; nothing was lost, try again later. */
  | 'gateway_unavailable'
  /** The gateway refused the key or the request. */
  | 'gateway_rejected'
  /** No such task. */
  | 'not_found'
  /** The task is not in a state that allows this (e.g. pausing a running task). */
  | 'not_allowed'
  /** The input is invalid (empty prompt, editing the workspace...). */
  | 'invalid_input'
  /** The local store failed; any ticket taken for it is being settled. */
  | 'store_failed';

export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  constructor(
    readonly code: ServiceErrorCode,
    message: string,
    readonly details: { nextTakeAt?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: details.cause });
  }
}

/** Maps a gateway failure to what the user is told. */
export function serviceErrorFromGateway(action: string, e: GatewayError): ServiceError {
  switch (e.kind) {
    case 'no_api_key':
      return new ServiceError('no_api_key', `Cannot ${action}: no gateway API key is set.`, { cause: e });
    case 'not_eligible':
      return new ServiceError('not_eligible', `Cannot ${action}: your plan is not eligible for off-peak tasks.`, { cause: e });
    case 'limit_reached':
      return new ServiceError(
        'limit_reached',
        `Cannot ${action}: the off-peak task limit is reached${e.nextTakeAt ? ` until ${new Date(e.nextTakeAt).toISOString()}` : ''}.`,
        { nextTakeAt: e.nextTakeAt, cause: e },
      );
    case 'unauthorized':
    case 'rejected':
    case 'ticket_invalid':
      return new ServiceError('gateway_rejected', `Cannot ${action}: ${e.reason}.`, { cause: e });
    default:
      // Worded for the panel's banner (e.reason: no endpoint, no raw error code); the log keeps e.message.
      return new ServiceError('gateway_unavailable', `Cannot ${action} now: ${e.reason}. Try again once the gateway answers.`, {
        cause: e,
      });
  }
}

export function toServiceError(action: string, e: unknown): ServiceError {
  if (e instanceof ServiceError) return e;
  if (isGatewayError(e)) return serviceErrorFromGateway(action, e);
  const message = e instanceof Error ? e.message : String(e);
  const code = (e as { code?: unknown } | undefined)?.code === 'INVALID_INPUT' ? 'invalid_input' : 'store_failed';
  return new ServiceError(code, `Cannot ${action}: ${message}`, { cause: e });
}
