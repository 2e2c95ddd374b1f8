// `npm start -- --personal`: what personal mode needs to run, from the command line and the
// environment, checked before anything is built or started. The model API key comes from the
// environment only (never a flag: argv is readable by every local user) and is removed from this
// process's environment once read, so code-server, the extension host and the agents never
// inherit it: it reaches the extension through a one-shot hand-over file that the first window
// imports into its SecretStorage (src/personal/model-key-handover.ts).
import { randomBytes } from 'node:crypto';

/** The environment variables the key may come from, in order. */
export const MODEL_KEY_ENV = ['OFFPEAK_MODEL_API_KEY', 'ANTHROPIC_API_KEY'] as const;

export type PersonalStart = { ok: true; upstreamUrl: string; modelApiKey: string } | { ok: false; message: string };

export const PERSONAL_USAGE = [
  'npm start -- --personal needs the model API to send tasks to:',
  '  --upstream-url <url>     an Anthropic-compatible API base, e.g. --upstream-url https://api.anthropic.com',
  `  ${MODEL_KEY_ENV.join(' or ')}   the API key, in the environment (never on the command line), e.g.`,
  '      ANTHROPIC_API_KEY=sk-ant-... npm start -- --personal --upstream-url https://api.anthropic.com',
  'Tasks then run with no gateway: a local authority on this machine queues them (docs: README "Personal mode").',
].join('\n');

/** The model API a personal start sends tasks to, and the key it hands over. */
export interface PersonalModelApi {
  upstreamUrl: string;
  modelApiKey: string;
  /** The scripted stand-in only: the x-api-key of every model request it received. */
  modelRequestKeys?: () => (string | undefined)[];
  /** The scripted stand-in only: stops it. */
  stop?: () => Promise<void>;
}

/** Reads and checks --upstream-url and the key; takes the key out of `env`. */
export function personalStart(upstreamUrl: string | undefined, env: NodeJS.ProcessEnv): PersonalStart {
  const name = MODEL_KEY_ENV.find((n) => (env[n] ?? '').trim() !== '');
  const modelApiKey = name ? env[name]!.trim() : undefined;
  for (const n of MODEL_KEY_ENV) delete env[n];
  const missing: string[] = [];
  if (!upstreamUrl) missing.push('--upstream-url is not set');
  if (!modelApiKey) missing.push(`no API key in ${MODEL_KEY_ENV.join(' or ')}`);
  if (missing.length > 0) return { ok: false, message: `${missing.join('; ')}.\n${PERSONAL_USAGE}` };
  let url: URL;
  try {
    url = new URL(upstreamUrl!);
  } catch {
    return { ok: false, message: `--upstream-url ${upstreamUrl} is not a URL.\n${PERSONAL_USAGE}` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { ok: false, message: `--upstream-url must be http(s).\n${PERSONAL_USAGE}` };
  if (/\s/.test(modelApiKey!)) return { ok: false, message: 'the API key has spaces in it' };
  return { ok: true, upstreamUrl: url.href.replace(/\/+$/, ''), modelApiKey: modelApiKey! };
}

/**
 * `--personal --check` without `--upstream-url`: the model API is the scripted fake upstream, a
 * TEST FIXTURE standing in for a real API (test/fixtures/fake-anthropic-upstream.ts; every answer
 * is an end_turn text, so a first task completes at its first model request), and the key is one
 * made for this check: a key from the environment is never sent to a stand-in.
 */
export async function scriptedModelApi(): Promise<Required<PersonalModelApi>> {
  const { FakeAnthropicUpstream } = await import('../test/fixtures/fake-anthropic-upstream');
  const upstream = await FakeAnthropicUpstream.start();
  return {
    upstreamUrl: upstream.url,
    modelApiKey: `sk-check-${randomBytes(18).toString('hex')}`,
    modelRequestKeys: () =>
      upstream.messageRequests().map((r) => {
        const key = r.headers['x-api-key'];
        return Array.isArray(key) ? key.join(',') : key;
      }),
    stop: () => upstream.close(),
  };
}
