import * as z from 'zod/mini';
import type { CanonicalUsage } from '../../src/canonical/index.ts';

const tokenCount = z.nullish(z.number());

/**
 * The usage object of OpenAI-compatible responses, stream chunks and embeddings. Loose objects keep the fields this
 * schema does not read (audio tokens, prediction tokens, DeepSeek's `prompt_cache_miss_tokens` ...), so the parsed
 * value is the provider's usage object untouched and can be kept as `raw`.
 */
export const openAICompatibleUsageSchema = z.looseObject({
  prompt_tokens: tokenCount,
  completion_tokens: tokenCount,
  total_tokens: tokenCount,
  prompt_tokens_details: z.nullish(z.looseObject({ cached_tokens: tokenCount })),
  completion_tokens_details: z.nullish(z.looseObject({ reasoning_tokens: tokenCount })),
  /** DeepSeek's count of prompt tokens read from its context cache (it also sends `prompt_tokens_details`). */
  prompt_cache_hit_tokens: tokenCount,
});

/** A parsed OpenAI-compatible usage object. */
export type OpenAICompatibleUsage = z.infer<typeof openAICompatibleUsageSchema>;

/**
 * Converts OpenAI usage to canonical usage. OpenAI's accounting already matches the canonical one (prompt tokens
 * include cached ones; completion tokens include reasoning ones), so counts are copied; a missing total is the sum.
 * Cached and reasoning counts are set only when the provider reported them, and `raw` is the provider's object.
 *
 * @example
 * convertOpenAICompatibleUsage({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
 * // { inputTokens: 10, outputTokens: 5, totalTokens: 15, raw: {...} }
 */
export function convertOpenAICompatibleUsage(usage: OpenAICompatibleUsage): CanonicalUsage {
  const inputTokens = usage.prompt_tokens ?? 0;
  const outputTokens = usage.completion_tokens ?? 0;
  const canonical: CanonicalUsage = {
    inputTokens,
    outputTokens,
    totalTokens: usage.total_tokens ?? inputTokens + outputTokens,
  };
  const cachedInputTokens = usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens;
  if (cachedInputTokens !== null && cachedInputTokens !== undefined) canonical.cachedInputTokens = cachedInputTokens;
  const reasoningTokens = usage.completion_tokens_details?.reasoning_tokens;
  if (reasoningTokens !== null && reasoningTokens !== undefined) canonical.reasoningTokens = reasoningTokens;
  canonical.raw = usage;
  return canonical;
}
