// The core of "Off-Peak: Set Notification Target…" and "Send Test Notification"
// (docs/flows.md#away-notifications), vscode-free: the command in src/vscode/notify-commands.ts
// only supplies the input box, the pick, the confirmation and SecretStorage.
import type { NotifyTarget, NotifyTargetKind } from '../protocol/notify';
import { requestFor, testMessage } from './notify-message';
import { postNotification, type SendResult } from './notify-sender';
import { guessTargetKind, NotifyTargetError, parseTargetUrl } from './notify-target';

type Post = (request: { url: string; body: unknown }) => Promise<SendResult>;

/** Sends the test message once (no retries: the user is waiting and may try again). */
export async function sendTestNotification(target: NotifyTarget, now: number, post: Post = postNotification): Promise<SendResult> {
  let request: { url: string; body: unknown };
  try {
    request = requestFor(target, testMessage(), now);
  } catch (e) {
    return {
      ok: false,
      retryable: false,
      error: e instanceof NotifyTargetError ? e.message : 'the message could not be made for this target',
    };
  }
  return post(request);
}

export interface SetTargetSteps {
  /** The URL the user types ('' removes the target; undefined: cancelled). */
  askUrl(): Promise<string | undefined>;
  /** Which kind the URL is, the guess first (undefined: cancelled). */
  pickKind(guess: NotifyTargetKind): Promise<NotifyTargetKind | undefined>;
  /** The test did not arrive: keep the target anyway? */
  keepAfterFailure(error: string): Promise<boolean>;
  save(target: NotifyTarget): Promise<void>;
  remove(): Promise<void>;
  now(): number;
  post?: Post;
}

export type SetTargetOutcome =
  | { kind: 'cancelled' }
  | { kind: 'removed' }
  | { kind: 'invalid'; error: string }
  | { kind: 'saved'; target: NotifyTargetKind; test: SendResult }
  | { kind: 'not-saved'; test: SendResult };

/** Asks for a URL and its kind, sends a test, and keeps the target when the test arrived (or the user says so). */
export async function setNotificationTarget(steps: SetTargetSteps): Promise<SetTargetOutcome> {
  const text = await steps.askUrl();
  if (text === undefined) return { kind: 'cancelled' };
  if (text.trim() === '') {
    await steps.remove();
    return { kind: 'removed' };
  }
  let url: URL;
  try {
    url = parseTargetUrl(text);
  } catch (e) {
    return { kind: 'invalid', error: e instanceof Error ? e.message : String(e) };
  }
  const kind = await steps.pickKind(guessTargetKind(url));
  if (!kind) return { kind: 'cancelled' };
  const target: NotifyTarget = { kind, url: url.toString() };
  const test = await sendTestNotification(target, steps.now(), steps.post);
  if (!test.ok && !(await steps.keepAfterFailure(test.error))) return { kind: 'not-saved', test };
  await steps.save(target);
  return { kind: 'saved', target: kind, test };
}
