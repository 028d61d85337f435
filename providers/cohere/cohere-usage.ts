import * as z from 'zod/mini';
import type { CanonicalUsage } from '../../src/canonical/index.ts';

const tokenCountsSchema = z.object({
  input_tokens: z.nullish(z.number()),
  output_tokens: z.nullish(z.number()),
});

/** Cohere's chat `usage` (`usage` of a response, `delta.usage` of `message-end`): only the fields the gateway reads. */
export const cohereUsageSchema = z.object({
  billed_units: z.nullish(tokenCountsSchema),
  tokens: z.nullish(tokenCountsSchema),
  cached_tokens: z.nullish(z.number()),
});

/** A parsed Cohere usage object. */
export type CohereUsage = z.infer<typeof cohereUsageSchema>;

/**
 * Normalises Cohere's usage. Cohere reports two counts: `tokens` (what the model processed, including the prompt
 * template Cohere wraps around the conversation) and `billed_units` (what Cohere bills). The gateway's ledger takes
 * `billed_units`, field by field, falling back to `tokens` for a field billing leaves out: cost and quotas must
 * follow Cohere's invoice, and the billed input is also the count closest to what the client sent (a 5-token
 * question bills 5 input tokens where `tokens` reports 71). The whole object is kept as `raw`.
 * `cached_tokens` (prompt tokens that hit Cohere's inference cache) becomes `cachedInputTokens`, capped at the input
 * count because it is measured in processed tokens. Cohere does not report reasoning tokens apart.
 *
 * @example
 * toCanonicalCohereUsage({ billed_units: { input_tokens: 5, output_tokens: 26 }, tokens: { input_tokens: 71, output_tokens: 26 } }, raw);
 * // { inputTokens: 5, outputTokens: 26, totalTokens: 31, raw }
 */
export function toCanonicalCohereUsage(usage: CohereUsage, raw: unknown): CanonicalUsage {
  const inputTokens = usage.billed_units?.input_tokens ?? usage.tokens?.input_tokens ?? 0;
  const outputTokens = usage.billed_units?.output_tokens ?? usage.tokens?.output_tokens ?? 0;
  const canonical: CanonicalUsage = { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
  if (usage.cached_tokens !== null && usage.cached_tokens !== undefined)
    canonical.cachedInputTokens = Math.min(usage.cached_tokens, inputTokens);
  canonical.raw = raw;
  return canonical;
}
