/**
 * The price list the extension ships (docs/flows.md#capacity-and-cost): `@pydantic/genai-prices`,
 * providers' published prices kept by its maintainers (its own bundle, `dist/prices.js`, loaded when
 * the engine starts: the list is ~0.5 MB). Its data is the package's own; it is never updated over
 * the network here. Its `input_tokens` is the whole input, the cache's tokens included (Anthropic's
 * `input_tokens` leaves them out), and each kind is priced at its own rate, tiers included.
 */
import { calcPrice } from '@pydantic/genai-prices';
import type { Pricer } from './spend';

export const listedPrice: Pricer = (model, usage) => {
  if (model === null || model === '') return null;
  const price = calcPrice(
    {
      input_tokens: usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens,
      output_tokens: usage.outputTokens,
      cache_read_tokens: usage.cacheReadTokens,
      cache_write_tokens: usage.cacheWriteTokens,
    },
    model,
    { providerId: 'anthropic' },
  );
  return price ? price.total_price : null;
};
