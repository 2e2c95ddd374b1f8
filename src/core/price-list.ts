/**
 * Dollars per answer (docs/flows.md#capacity-and-cost): `offPeak.prices` first (a model id, or a
 * prefix ending in `*`, to dollars per million tokens of each kind), else the price list the
 * extension ships (`@pydantic/genai-prices`, a maintained package of providers' published prices).
 */
import { costAt, type ModelPrice, type Pricer } from './spend';

const KINDS = ['input', 'output', 'cacheRead', 'cacheWrite'] as const;

/** `offPeak.prices` as set, each entry checked: four non-negative numbers, else it is left out. */
export function priceOverrides(value: unknown): Map<string, ModelPrice> {
  const out = new Map<string, ModelPrice>();
  if (!value || typeof value !== 'object' || Array.isArray(value)) return out;
  for (const [model, entry] of Object.entries(value as Record<string, unknown>)) {
    if (!entry || typeof entry !== 'object') continue;
    const price = entry as Record<string, unknown>;
    if (KINDS.every((k) => typeof price[k] === 'number' && Number.isFinite(price[k]) && price[k] >= 0))
      out.set(model, {
        input: price.input as number,
        output: price.output as number,
        cacheRead: price.cacheRead as number,
        cacheWrite: price.cacheWrite as number,
      });
  }
  return out;
}

/** The override for `model`: its exact id, else the longest matching `prefix*`. */
function overrideFor(overrides: ReadonlyMap<string, ModelPrice>, model: string): ModelPrice | undefined {
  const exact = overrides.get(model);
  if (exact) return exact;
  let best: [string, ModelPrice] | undefined;
  for (const [key, price] of overrides)
    if (key.endsWith('*') && model.startsWith(key.slice(0, -1)) && (!best || key.length > best[0].length)) best = [key, price];
  return best?.[1];
}

/** The setting over the list: an answer of a model neither knows has no price (null). */
export function makePricer(overrides: ReadonlyMap<string, ModelPrice>, listed: Pricer): Pricer {
  return (model, usage) => {
    if (model === null || model === '') return null;
    const own = overrideFor(overrides, model);
    return own ? costAt(own, usage) : listed(model, usage);
  };
}
