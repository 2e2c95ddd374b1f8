// Messages between the extension host and the Off-Peak Tasks webview. One zod definition is
// used on both sides: the host validates everything the webview sends (a webview is untrusted
// input), the webview validates the snapshots it renders. The host is the single source of
// state: it pushes whole, versioned snapshots and posts nothing before the webview says `ready`.
// The parts: the card (webview-card.ts), the snapshot (webview-snapshot.ts), the requests
// (webview-requests.ts), the create form (task-form.ts) and the schedules (schedules.ts).
import * as z from './zod';
import { PanelRequests, type PanelMethod } from './webview-requests';
import { PanelStateArrivalSchema } from './webview-snapshot';

export { CreateTaskFormSchema, PermissionModeSchema, PROMPT_MAX_CHARS, type CreateTaskForm } from './task-form';
export * from './schedules';
export * from './webview-card';
export * from './webview-snapshot';
export * from './webview-requests';

// --- webview -> host --------------------------------------------------------------------------

const requestId = z.string().check(z.minLength(1)).check(z.maxLength(64));
const methodNames = Object.keys(PanelRequests) as [PanelMethod, ...PanelMethod[]];

export const WebviewToHostSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('request'), requestId, method: z.enum(methodNames), params: z.unknown() }),
]);
export type WebviewToHost = z.infer<typeof WebviewToHostSchema>;

// --- host -> webview -------------------------------------------------------------------------

export const HostToWebviewSchema = z.union([
  z.object({ type: z.literal('state'), state: PanelStateArrivalSchema }),
  z.object({ type: z.literal('result'), requestId: z.string(), ok: z.literal(true), result: z.unknown() }),
  /** `code`: the service's error code (e.g. `gateway_unavailable`: the panel clears that banner once the gateway answers again). */
  z.object({ type: z.literal('result'), requestId: z.string(), ok: z.literal(false), error: z.string(), code: z.optional(z.string()) }),
  /** Asks the webview to bring the create form into view (the "Queue Off-Peak Task…" command). */
  z.object({ type: z.literal('focusForm') }),
]);
export type HostToWebview = z.infer<typeof HostToWebviewSchema>;

/** A readable one-line explanation of why a message was refused. */
export function describeInvalidMessage(error: z.core.$ZodError): string {
  const first = error.issues[0];
  if (!first) return 'invalid message';
  const where = first.path.length > 0 ? first.path.join('.') : 'message';
  return `${where}: ${first.message}`;
}
