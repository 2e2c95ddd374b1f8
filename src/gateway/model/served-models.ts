// What `GET /api/v1/off-peak/client/models` answers: the models this gateway serves, for the
// client's Model list. With an allow-list (--models) that list: the gateway forwards only those.
// Without one, what the model upstream's `GET /v1/models` (Anthropic's list endpoint) answers,
// asked with the gateway's key (personal mode: the user's model API key, read at each ask). No
// upstream, no key, a refused, failed or malformed answer: an empty list, no error (the client
// then offers the default alone). One answer is kept a few minutes per upstream and key.
import { createHash } from 'node:crypto';
import stripAnsi from 'strip-ansi';
import type { Clock } from '../../core/clock';
import { plainNotificationText } from '../../core/untrusted-text';
import { MODEL_ID_PATTERN, UpstreamModelListSchema, type AllowedModel } from '../../protocol/gateway';
import type { Logger } from '../http/logger';

export interface ServedModelsOptions {
  allowList: readonly AllowedModel[];
  /** Read at each ask: main.ts sets the demo model's address after the start. */
  upstreamUrl: () => string | null;
  apiKey: () => Promise<string | null>;
  auth: 'x-api-key' | 'bearer';
  clock: Clock;
  log: Logger;
  fetch?: typeof fetch;
}

/** How long one upstream answer is kept; a failed or empty one for less, so a fixed key shows soon. */
const KEEP_MS = 5 * 60_000;
const KEEP_EMPTY_MS = 30_000;
const ASK_TIMEOUT_MS = 5_000;
/** More than any model API lists; a list beyond it is cut (a Model list is read by a person). */
const MAX_MODELS = 200;

export class ServedModels {
  private kept: { key: string; until: number; models: Promise<AllowedModel[]> } | undefined;
  /** The status of the last ask when the upstream refused the key (401/403), else undefined. */
  private refused: number | undefined;

  /** Whether the upstream refused the key at the last ask (the local authority tells its window). */
  get refusedStatus(): number | undefined {
    return this.refused;
  }

  constructor(private readonly options: ServedModelsOptions) {}

  async list(): Promise<AllowedModel[]> {
    if (this.options.allowList.length > 0) return [...this.options.allowList];
    const url = this.options.upstreamUrl();
    const apiKey = url ? await this.options.apiKey() : null;
    if (!url || !apiKey) return [];
    const key = createHash('sha256').update(`${url}\n${apiKey}`).digest('hex');
    const now = this.options.clock.now();
    if (this.kept?.key === key && now < this.kept.until) return this.kept.models;
    const models = this.ask(url, apiKey);
    const kept = { key, until: now + KEEP_MS, models };
    this.kept = kept;
    void models.then((list) => {
      if (list.length === 0) kept.until = Math.min(kept.until, now + KEEP_EMPTY_MS);
    });
    return models;
  }

  private async ask(url: string, apiKey: string): Promise<AllowedModel[]> {
    const base = new URL(url);
    const target = new URL(`${base.pathname.replace(/\/$/, '')}/v1/models?limit=1000`, base);
    const headers: Record<string, string> = { accept: 'application/json', 'anthropic-version': '2023-06-01' };
    if (this.options.auth === 'bearer') headers.authorization = `Bearer ${apiKey}`;
    else headers['x-api-key'] = apiKey;
    try {
      const response = await (this.options.fetch ?? fetch)(target, { headers, signal: AbortSignal.timeout(ASK_TIMEOUT_MS) });
      this.refused = response.status === 401 || response.status === 403 ? response.status : undefined;
      if (!response.ok) {
        await response.body?.cancel();
        this.options.log.info('model list not available upstream', { target: target.origin, status: response.status });
        return [];
      }
      const parsed = UpstreamModelListSchema.safeParse(await response.json());
      if (!parsed.success) {
        this.options.log.info('model list from upstream has another shape', { target: target.origin });
        return [];
      }
      return servedFrom(parsed.data.data);
    } catch (error) {
      this.options.log.info('model list not available upstream', { target: target.origin, error: (error as Error).message });
      return [];
    }
  }
}

/** The upstream's entries a Model list may offer: well-formed ids, once each, names as plain text. */
function servedFrom(entries: readonly { id: string; display_name?: string }[]): AllowedModel[] {
  const seen = new Set<string>();
  const served: AllowedModel[] = [];
  for (const entry of entries) {
    if (!MODEL_ID_PATTERN.test(entry.id) || seen.has(entry.id)) continue;
    seen.add(entry.id);
    served.push({ id: entry.id, display_name: plainNotificationText(stripAnsi(entry.display_name ?? entry.id), 100) });
    if (served.length === MAX_MODELS) break;
  }
  return served;
}
