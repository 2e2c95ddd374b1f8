// Messages between the extension host and the Off-Peak Tasks webview. One zod definition is
// used on both sides: the host validates everything the webview sends (a webview is untrusted
// input), the webview validates the snapshots it renders. The host is the single source of
// state: it pushes whole, versioned snapshots and posts nothing before the webview says `ready`.
import { z } from 'zod';

export const PermissionModeSchema = z.enum(['default', 'acceptEdits', 'plan', 'bypassPermissions']);

/** What a card shows as its state: finer than the local status (seed 11: "running" before admission is a lie). */
export const CardPhaseSchema = z.enum([
  'taking_ticket', // no live ticket yet (first take or a retake is pending)
  'in_queue', // the gateway's FIFO holds the ticket
  'ready', // the gateway admitted the ticket; the scheduler will start it
  'paused',
  'waiting_for_admission', // the agent runs, but no model request of this segment was admitted yet
  'running',
  'completed',
  'failed',
  'cancelled',
]);
export type CardPhase = z.infer<typeof CardPhaseSchema>;

export const TaskCardSchema = z.object({
  id: z.string(),
  title: z.string(),
  prompt: z.string(),
  status: z.enum(['queued', 'paused', 'running', 'awaiting', 'completed', 'failed', 'cancelled']),
  phase: CardPhaseSchema,
  queuePosition: z.number().int().nullable(),
  workspacePath: z.string(),
  permissionMode: PermissionModeSchema,
  model: z.string().nullable(),
  thoughtLevel: z.string().nullable(),
  queuedAt: z.number(),
  startedAt: z.number().nullable(),
  endedAt: z.number().nullable(),
  failureReason: z.string().nullable(),
  lastError: z.string().nullable(),
  filesChanged: z.number().int().nullable(),
  segments: z.number().int().nonnegative(),
  actions: z.object({
    pause: z.boolean(),
    continue: z.boolean(),
    edit: z.boolean(),
    cancel: z.boolean(),
    delete: z.boolean(),
  }),
});
export type TaskCard = z.infer<typeof TaskCardSchema>;

export const HistoryRowSchema = z.object({
  taskId: z.string(),
  title: z.string(),
  prompt: z.string(),
  triggeredAt: z.number(),
  status: z.enum(['in_progress', 'succeeded', 'failure', 'skipped']),
  durationMs: z.number().nonnegative(),
  sessionId: z.string().nullable(),
  failureReason: z.string().nullable(),
});

export const AvailabilityViewSchema = z.object({
  canCreate: z.boolean(),
  /** Why create is disabled, for the tooltip; absent when enabled. */
  reason: z.string().optional(),
  nextTakeAt: z.number().optional(),
  canTakeNumber: z.number().int().optional(),
});

export const PanelStateSchema = z.object({
  /** Increases with every snapshot; the webview ignores anything older than what it shows. */
  version: z.number().int().nonnegative(),
  now: z.number(),
  tasks: z.array(TaskCardSchema),
  history: z.array(HistoryRowSchema),
  availability: AvailabilityViewSchema,
  hasApiKey: z.boolean(),
  models: z.array(z.string()),
  workspaces: z.array(z.object({ name: z.string(), path: z.string() })),
  /** A problem the user should see (corrupt DB moved aside, gateway unreachable...). */
  notice: z.string().optional(),
});
export type PanelState = z.infer<typeof PanelStateSchema>;

// --- webview -> host -------------------------------------------------------------------------

const requestId = z.string().min(1).max(64);
const taskId = z.string().min(1).max(200);
const title = z.string().max(200);
const prompt = z.string().min(1, 'The prompt is empty').max(100_000);

export const CreateTaskInputSchema = z.object({
  title,
  prompt,
  workspacePath: z.string().min(1, 'Choose a workspace folder').max(4096),
  permissionMode: PermissionModeSchema,
  model: z.string().max(200).nullable(),
  thoughtLevel: z.string().max(50).nullable(),
});
export type CreateTaskInput = z.infer<typeof CreateTaskInputSchema>;

export const EditTaskPatchSchema = z
  .object({ title, prompt, permissionMode: PermissionModeSchema, model: z.string().max(200).nullable(), thoughtLevel: z.string().max(50).nullable() })
  .partial()
  .strict();

export const WebviewToHostSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('createTask'), requestId, input: CreateTaskInputSchema }),
  z.object({ type: z.literal('editTask'), requestId, taskId, patch: EditTaskPatchSchema }),
  z.object({ type: z.enum(['pause', 'continue', 'cancel', 'delete', 'deleteHistory', 'openTerminal']), requestId, taskId }),
  z.object({ type: z.literal('setApiKey'), requestId }),
  z.object({ type: z.literal('refresh'), requestId }),
]);
export type WebviewToHost = z.infer<typeof WebviewToHostSchema>;
export type TaskCommand = Extract<WebviewToHost, { taskId: string }>['type'];

// --- host -> webview -------------------------------------------------------------------------

export const HostToWebviewSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('state'), state: PanelStateSchema }),
  z.object({ type: z.literal('result'), requestId: z.string(), ok: z.boolean(), error: z.string().optional() }),
  /** Asks the webview to bring the create form into view (the "Queue Off-Peak Task…" command). */
  z.object({ type: z.literal('focusForm') }),
]);
export type HostToWebview = z.infer<typeof HostToWebviewSchema>;

/** A readable one-line explanation of why a message was refused. */
export function describeInvalidMessage(error: z.ZodError): string {
  const first = error.issues[0];
  if (!first) return 'invalid message';
  const where = first.path.length > 0 ? first.path.join('.') : 'message';
  return `${where}: ${first.message}`;
}
