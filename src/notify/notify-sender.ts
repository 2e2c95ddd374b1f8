// One HTTP post of an away notification, through ky with no retries of its own (the outbox
// retries: docs/flows.md#away-notifications). What it reports never repeats the URL (a credential)
// or the response: the status, or the kind of network failure.
import ky, { TimeoutError } from 'ky';

export type SendResult = { ok: true; status: number } | { ok: false; retryable: boolean; error: string };

export interface PostOptions {
  timeoutMs?: number;
  /** The fetch to use (tests; default the runtime's). */
  fetch?: typeof fetch;
}

export const DEFAULT_SEND_TIMEOUT_MS = 10_000;

/** A network-level failure in a few words: the error's code, never its message (which may hold the URL). */
function failureOf(e: unknown): string {
  if (e instanceof TimeoutError) return 'timed out';
  const cause = (e as { cause?: { code?: unknown } } | undefined)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  return code ? `network error (${code})` : 'network error';
}

export async function postNotification(request: { url: string; body: unknown }, options: PostOptions = {}): Promise<SendResult> {
  try {
    const response = await ky.post(request.url, {
      json: request.body,
      retry: 0,
      timeout: options.timeoutMs ?? DEFAULT_SEND_TIMEOUT_MS,
      throwHttpErrors: false,
      // A redirect would carry the message somewhere the user never chose.
      redirect: 'manual',
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    // Nothing of the answer is needed: read it off so the connection is free again.
    await response.arrayBuffer().catch(() => undefined);
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status };
    const retryable = response.status >= 500 || response.status === 429 || response.status === 408;
    return { ok: false, retryable, error: `HTTP ${response.status}` };
  } catch (e) {
    return { ok: false, retryable: true, error: failureOf(e) };
  }
}
