// What an away notification says (docs/flows.md#away-notifications). One rule for every kind of
// receiver: what the event is, the task's short id, a question's tool name, a usage limit's reset;
// nothing the user wrote or the agent produced (the task's title is the start of the prompt, a
// failure reason or a check's output may quote code) unless its `offPeak.notify.include.*`
// setting is on. Every text that does go out is flattened to plain text first.
import { outcomeOf } from '../core/outcome';
import { shortTaskId } from '../core/task-title';
import { plainNotificationText } from '../core/untrusted-text';
import {
  DiscordPayloadSchema,
  NtfyPayloadSchema,
  SlackPayloadSchema,
  WebhookPayloadSchema,
  type NotifyEvent,
  type NotifyTarget,
  type WebhookPayload,
} from '../protocol/notify';
import type { NotifyInclude } from './notify-include';
import { ntfyEndpoint } from './notify-target';

/** One message, before it is shaped for a receiver. `fields`: what the generic webhook gets besides the text. */
export interface NotifyMessage {
  event: WebhookPayload['event'];
  title: string;
  text: string;
  tags: string[];
  priority: number;
  fields: Pick<WebhookPayload, 'task' | 'tool' | 'question' | 'reason' | 'reset_at'>;
}

/** A tool name is the agent's: letters, digits and `_.:-` only (an MCP tool is `mcp__server__tool`). */
const toolName = (tool: string) => tool.replace(/[^A-Za-z0-9_.:-]/g, '').slice(0, 64) || 'a tool';
const plain = (text: string, max = 300) => plainNotificationText(text, max);
const folderName = (folder: string) => folder.split(/[\\/]/).filter(Boolean).pop() ?? folder;

/** The message for an event; `formatTime` words a time of day in the user's locale and zone. */
export function messageOf(event: NotifyEvent, include: NotifyInclude, formatTime: (at: number) => string): NotifyMessage {
  if (event.kind === 'usage-limit-hold' || event.kind === 'usage-limit-end') {
    const at = formatTime(event.resetAt);
    const reset_at = new Date(event.resetAt).toISOString();
    return event.kind === 'usage-limit-hold'
      ? {
          event: event.kind,
          title: 'Off-Peak: usage limit reached',
          text: `The account's usage limit is reached; held tasks resume at ${at}.`,
          tags: ['hourglass'],
          priority: 3,
          fields: { reset_at },
        }
      : {
          event: event.kind,
          title: 'Off-Peak: usage limit over',
          text: `The account's usage limit has reset (${at}); held tasks go on.`,
          tags: ['arrow_forward'],
          priority: 3,
          fields: { reset_at },
        };
  }
  const id = shortTaskId(event.taskId);
  const title = include.taskTitle && event.title ? plain(event.title, 120) : undefined;
  const folder = include.folder && event.folder ? plain(folderName(event.folder), 120) : undefined;
  const task = `Task ${id}${title ? ` "${title}"` : ''}${folder ? ` in ${folder}` : ''}`;
  const fields: NotifyMessage['fields'] = { task: { id: event.taskId, ...(title ? { title } : {}), ...(folder ? { folder } : {}) } };
  switch (event.kind) {
    case 'needs-input': {
      const tool = toolName(event.tool);
      const question = include.question && event.question ? plain(event.question) : undefined;
      return {
        event: event.kind,
        title: 'Off-Peak: a task needs input',
        text: `${task} needs input: it asks before running ${tool}${question ? `: ${question}` : ''}.`,
        tags: ['question'],
        priority: 4,
        fields: { ...fields, tool, ...(question ? { question } : {}) },
      };
    }
    case 'ready': {
      // The outcome's words (src/core/outcome.ts): "completed", or "ready for review · checks pass" when a check passed.
      const outcome = outcomeOf({ status: 'completed', check: event.checks ? { state: 'passed', round: event.checks.round } : null });
      const checks = event.checks
        ? ` (${include.checkCommand ? `${plain(event.checks.command, 120)}, ` : ''}round ${event.checks.round})`
        : '';
      return {
        event: event.kind,
        title: event.checks ? `Off-Peak: ${outcome.short}` : 'Off-Peak: a task completed',
        text: event.checks ? `${task}: ${outcome.short}${checks}.` : `${task} ${outcome.short}.`,
        tags: ['white_check_mark'],
        priority: 3,
        fields,
      };
    }
    case 'check-failed': {
      const command = include.checkCommand ? ` (${plain(event.command, 120)})` : '';
      const output = include.failureReason && event.output ? plain(event.output) : undefined;
      return {
        event: event.kind,
        title: 'Off-Peak: check failed',
        text: `${task}: ${outcomeOf({ status: 'completed', check: { state: 'failed', round: event.rounds } }).short}${command}${output ? `: ${output}` : ''}.`,
        tags: ['x'],
        priority: 4,
        fields: { ...fields, ...(output ? { reason: output } : {}) },
      };
    }
    case 'failed': {
      const reason = include.failureReason && event.reason ? plain(event.reason) : undefined;
      return {
        event: event.kind,
        title: 'Off-Peak: a task failed',
        text: `${task} failed${reason ? `: ${reason}` : ''}.`,
        tags: ['warning'],
        priority: 4,
        fields: { ...fields, ...(reason ? { reason } : {}) },
      };
    }
  }
}

/** What "Send Test Notification" sends: no task, nothing of the user's. */
export function testMessage(): NotifyMessage {
  return {
    event: 'test',
    title: 'Off-Peak: test notification',
    text: 'Off-Peak Tasks can reach you here. Questions, results and usage limits will arrive like this.',
    tags: ['bell'],
    priority: 3,
    fields: {},
  };
}

/** Slack's text is markup: `&`, `<` and `>` are escaped so no text can mention a channel or form a link. */
function slackText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The request for a target: where it goes and its JSON body, checked by the receiver's schema. */
export function requestFor(target: NotifyTarget, message: NotifyMessage, sentAt: number): { url: string; body: unknown } {
  switch (target.kind) {
    case 'ntfy': {
      const { publishUrl, topic } = ntfyEndpoint(target.url);
      return {
        url: publishUrl,
        body: NtfyPayloadSchema.parse({
          topic,
          title: message.title,
          message: message.text,
          tags: message.tags,
          priority: message.priority,
        }),
      };
    }
    case 'slack':
      return { url: target.url, body: SlackPayloadSchema.parse({ text: slackText(`*${message.title}*\n${message.text}`) }) };
    case 'discord':
      return {
        url: target.url,
        body: DiscordPayloadSchema.parse({
          content: `**${message.title}**\n${message.text}`.slice(0, 2_000),
          allowed_mentions: { parse: [] },
        }),
      };
    case 'webhook':
      return {
        url: target.url,
        body: WebhookPayloadSchema.parse({
          source: 'off-peak-tasks',
          event: message.event,
          title: message.title,
          text: message.text,
          ...message.fields,
          sent_at: new Date(sentAt).toISOString(),
        }),
      };
  }
}
