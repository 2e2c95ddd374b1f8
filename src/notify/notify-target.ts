// Where away notifications go (docs/flows.md#away-notifications): an ntfy topic URL, a Slack- or
// Discord-compatible incoming webhook, or a generic JSON webhook. The URL is a credential (whoever
// has it can post there, or read an ntfy topic), so it lives in SecretStorage only and no text
// here (an error, a log line) ever repeats it.
import { isLiteralLoopback } from '../core/loopback-host';
import { NOTIFY_TARGET_KINDS, type NotifyTarget, type NotifyTargetKind } from '../protocol/notify';

export const NOTIFY_TARGET_LABELS: Readonly<Record<NotifyTargetKind, string>> = {
  ntfy: 'ntfy topic',
  slack: 'Slack-compatible incoming webhook (Slack, Mattermost, Rocket.Chat)',
  discord: 'Discord webhook',
  webhook: 'Generic JSON webhook',
};

export class NotifyTargetError extends Error {}

/**
 * The target URL the user typed, checked: https, or plain http to a literal loopback address only
 * (the URL and every message would cross the network readable, or reach another local user's
 * server: `isLiteralLoopback`); no user name or password in it.
 */
export function parseTargetUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new NotifyTargetError('That is not a URL (e.g. https://ntfy.sh/my-secret-topic).');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLiteralLoopback(url.hostname))) {
    throw new NotifyTargetError(
      'The URL must start with https:// (plain http only to this machine by address: 127.0.0.1 or [::1], not localhost).',
    );
  }
  if (url.username || url.password)
    throw new NotifyTargetError('Put no user name or password in the URL; use a secret topic or webhook URL.');
  if (url.hash) throw new NotifyTargetError('The URL must not have a #fragment.');
  return url;
}

/** The kind a URL most likely is, for the command's first choice (the user confirms it). */
export function guessTargetKind(url: URL): NotifyTargetKind {
  const host = url.hostname.toLowerCase();
  if (host === 'hooks.slack.com' || url.pathname.startsWith('/hooks/')) return 'slack';
  if (/(^|\.)discord(app)?\.com$/.test(host) && url.pathname.startsWith('/api/webhooks/')) return 'discord';
  if (host === 'ntfy.sh' || host.startsWith('ntfy.')) return 'ntfy';
  return 'webhook';
}

/** A target read back from SecretStorage (or undefined when it is not one). */
export function targetOf(value: unknown): NotifyTarget | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { kind, url } = value as Record<string, unknown>;
  if (typeof url !== 'string' || !NOTIFY_TARGET_KINDS.includes(kind as NotifyTargetKind)) return undefined;
  try {
    parseTargetUrl(url);
  } catch {
    return undefined;
  }
  return { kind: kind as NotifyTargetKind, url };
}

/** ntfy's JSON publish goes to the server's root with the topic (the URL's last path segment) in the body. */
export function ntfyEndpoint(url: string): { publishUrl: string; topic: string } {
  const parsed = new URL(url);
  const parts = parsed.pathname.split('/').filter(Boolean);
  const topic = parts.pop() ?? '';
  if (!topic) throw new NotifyTargetError('An ntfy URL ends with its topic, e.g. https://ntfy.sh/my-secret-topic.');
  parsed.pathname = `/${parts.join('/')}`;
  parsed.search = '';
  return { publishUrl: parsed.toString(), topic: decodeURIComponent(topic) };
}
