import type { CanonicalUsage } from '../canonical/canonical-usage.ts';
import { lookupPrice, type PriceLookupOptions } from './price-lookup.ts';
import type { ModelPrice, PriceMatch } from './price-model.ts';

/**
 * The cost in US dollars of one request's usage at a price. Follows the accounting of {@link CanonicalUsage}:
 * `inputTokens` already includes cached and cache-write tokens, so those are priced at their own rates and taken out
 * of the full-rate input (never charged twice); `reasoningTokens` are part of `outputTokens` and priced at the
 * reasoning rate (the output rate unless the price says otherwise). Counts a provider reports inconsistently (more
 * cached than input tokens) are clamped, so the cost is never negative.
 *
 * @example
 * ```ts
 * costOf({ inputTokens: 1000, cachedInputTokens: 800, outputTokens: 100, totalTokens: 1100 }, gpt4oPrice);
 * // (200 * 2.5 + 800 * 1.25 + 100 * 10) / 1e6 = 0.0025
 * ```
 */
export function costOf(usage: CanonicalUsage, price: ModelPrice): number {
  const input = nonNegative(usage.inputTokens);
  const cached = Math.min(nonNegative(usage.cachedInputTokens), input);
  const cacheWrite = Math.min(nonNegative(usage.cacheWriteInputTokens), input - cached);
  const output = nonNegative(usage.outputTokens);
  const reasoning = Math.min(nonNegative(usage.reasoningTokens), output);
  const perMillion =
    (input - cached - cacheWrite) * price.inputPerMillion +
    cached * (price.cachedInputPerMillion ?? price.inputPerMillion) +
    cacheWrite * (price.cacheWriteInputPerMillion ?? price.inputPerMillion) +
    (output - reasoning) * price.outputPerMillion +
    reasoning * (price.reasoningPerMillion ?? price.outputPerMillion);
  return perMillion / 1_000_000;
}

/** What {@link usageCost} answers. */
export interface UsageCost {
  /** US dollars; 0 when the model has no price. */
  costUsd: number;
  /** False when neither the bundled table nor an override knows the model: the cost 0 is not a real price. */
  priced: boolean;
  /** The price used, and where it came from. */
  match: PriceMatch | undefined;
}

/**
 * Prices a request's usage for an upstream model: {@link lookupPrice} then {@link costOf}. An unknown model costs 0
 * with `priced: false`, so the caller can log it (once per model, with {@link createUnpricedModelNotices}).
 *
 * @example
 * ```ts
 * const { costUsd, priced } = usageCost('claude-sonnet-4-20250514', usage, { provider: 'anthropic', table: bundledPriceTable });
 * if (!priced && notices.isFirst(model)) logger.warn('No price for model; its cost is recorded as 0', { model });
 * ```
 */
export function usageCost(model: string, usage: CanonicalUsage, options: PriceLookupOptions = {}): UsageCost {
  const match = lookupPrice(model, options);
  if (match === undefined) return { costUsd: 0, priced: false, match: undefined };
  return { costUsd: costOf(usage, match.price), priced: true, match };
}

/** Remembers which unpriced models were already reported. */
export interface UnpricedModelNotices {
  /** True the first time a model name is passed, false afterwards. */
  isFirst(model: string): boolean;
}

/**
 * A bounded set of model names already logged as unpriced, so a gateway logs each one once rather than per request.
 * Past `maxModels` names it forgets the set and starts again (a flood of invented names cannot grow memory).
 *
 * @example
 * ```ts
 * const notices = createUnpricedModelNotices();
 * if (!cost.priced && notices.isFirst(upstreamModel)) logger.warn('unpriced model', { upstreamModel });
 * ```
 */
export function createUnpricedModelNotices(maxModels = 1000): UnpricedModelNotices {
  let seen = new Set<string>();
  return {
    isFirst(model) {
      if (seen.has(model)) return false;
      if (seen.size >= maxModels) seen = new Set();
      seen.add(model);
      return true;
    },
  };
}

function nonNegative(count: number | undefined): number {
  return count !== undefined && Number.isFinite(count) && count > 0 ? count : 0;
}
