// Away notifications (docs/flows.md#away-notifications): the events the task DB's outbox keeps,
// the target a user sets, and the body each kind of receiver gets. The sender validates every
// body with these schemas before it leaves; the tests' stand-in receivers parse with the same ones.
import * as z from './zod';

/** A task an event is about: its id always; its title (the start of the prompt) only when the user opts in. */
const TaskRef = z.object({
  taskId: z.string().check(z.minLength(1)).check(z.maxLength(200)),
  title: z.string().check(z.maxLength(2_000)),
  folder: z.string().check(z.maxLength(4_000)),
});

/**
 * What happened, with every fact a message could carry. The outbox keeps all of it (the task DB
 * already holds the prompt); what a message shows of it is decided at send time by the
 * `offPeak.notify.include.*` settings (src/notify/notify-message.ts).
 */
export const NotifyEventSchema = z.discriminatedUnion('kind', [
  /** The agent asks before a tool runs: the tool's name always, its one-line summary only when opted in. */
  z.extend(TaskRef, {
    kind: z.literal('needs-input'),
    askId: z.string().check(z.minLength(1)).check(z.maxLength(200)),
    tool: z.string().check(z.maxLength(200)),
    question: z.string().check(z.maxLength(2_000)),
  }),
  /** The agent ended its turn (and the task's checks passed, when it has any). */
  z.extend(TaskRef, {
    kind: z.literal('ready'),
    checks: z.optional(z.object({ command: z.string().check(z.maxLength(2_000)), round: z.number().check(z.int()).check(z.gte(1)) })),
  }),
  /** The task's checks still failed after its fix rounds. */
  z.extend(TaskRef, {
    kind: z.literal('check-failed'),
    command: z.string().check(z.maxLength(2_000)),
    rounds: z.number().check(z.int()).check(z.gte(1)),
    output: z.string().check(z.maxLength(4_000)),
  }),
  z.extend(TaskRef, { kind: z.literal('failed'), reason: z.string().check(z.maxLength(4_000)) }),
  /** The account's usage limit holds tasks until `resetAt` (docs/flows.md#usage-limits). */
  z.object({ kind: z.literal('usage-limit-hold'), resetAt: z.number().check(z.int()) }),
  /** …and that hold is over. */
  z.object({ kind: z.literal('usage-limit-end'), resetAt: z.number().check(z.int()) }),
]);
export type NotifyEvent = z.infer<typeof NotifyEventSchema>;
export type NotifyEventKind = NotifyEvent['kind'];

/** Where away notifications go: kept whole in SecretStorage only (the URL is a credential). */
export const NOTIFY_TARGET_KINDS = ['ntfy', 'slack', 'discord', 'webhook'] as const;
export const NotifyTargetSchema = z.object({ kind: z.enum(NOTIFY_TARGET_KINDS), url: z.string().check(z.url()).check(z.maxLength(2_000)) });
export type NotifyTarget = z.infer<typeof NotifyTargetSchema>;
export type NotifyTargetKind = NotifyTarget['kind'];

/** ntfy's JSON publish (POSTed to the server's root with the topic in the body). */
export const NtfyPayloadSchema = z.strictObject({
  topic: z.string().check(z.minLength(1)).check(z.maxLength(200)),
  title: z.string().check(z.maxLength(250)),
  message: z.string().check(z.maxLength(4_000)),
  tags: z.array(z.string().check(z.maxLength(50))).check(z.maxLength(5)),
  priority: z.number().check(z.int()).check(z.gte(1)).check(z.lte(5)),
});

/** A Slack-compatible incoming webhook (Slack, Mattermost, Rocket.Chat): one text. */
export const SlackPayloadSchema = z.strictObject({ text: z.string().check(z.minLength(1)).check(z.maxLength(4_000)) });

/** A Discord webhook: the content, and no mention may ping anyone (the text may hold `@everyone`). */
export const DiscordPayloadSchema = z.strictObject({
  content: z.string().check(z.minLength(1)).check(z.maxLength(2_000)),
  allowed_mentions: z.strictObject({ parse: z.array(z.never()).check(z.length(0)) }),
});

/** The generic JSON webhook: the event's kind and what the settings let out, plus the same text. */
export const WebhookPayloadSchema = z.strictObject({
  source: z.literal('off-peak-tasks'),
  event: z.enum(['needs-input', 'ready', 'check-failed', 'failed', 'usage-limit-hold', 'usage-limit-end', 'test']),
  title: z.string().check(z.maxLength(250)),
  text: z.string().check(z.maxLength(4_000)),
  task: z.optional(z.strictObject({ id: z.string(), title: z.optional(z.string()), folder: z.optional(z.string()) })),
  tool: z.optional(z.string()),
  question: z.optional(z.string()),
  reason: z.optional(z.string()),
  reset_at: z.optional(z.string()),
  sent_at: z.string(),
});
export type WebhookPayload = z.infer<typeof WebhookPayloadSchema>;
