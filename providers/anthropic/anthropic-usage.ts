import * as z from 'zod/mini';
import type { CanonicalUsage } from '../../src/canonical/index.ts';

/**
 * Anthropic's `usage` object: only the counts the gateway reads, every one optional (streams send them in two
 * halves, `message_delta` sends `null` for the input counts on older models).
 */
export const anthropicUsageSchema = z.object({
  input_tokens: z.nullish(z.number()),
  output_tokens: z.nullish(z.number()),
  cache_creation_input_tokens: z.nullish(z.number()),
  cache_read_input_tokens: z.nullish(z.number()),
  output_tokens_details: z.nullish(z.object({ thinking_tokens: z.nullish(z.number()) })),
});

/** A parsed Anthropic usage object. */
export type AnthropicUsage = z.infer<typeof anthropicUsageSchema>;

/**
 * Converts Anthropic usage to the gateway's OpenAI accounting: Anthropic's `input_tokens` excludes the tokens read
 * from and written to the prompt cache, so `inputTokens` adds both back; they are also reported apart as
 * `cachedInputTokens` and `cacheWriteInputTokens` (present only when Anthropic reported them). Thinking tokens, when
 * Anthropic breaks them out, become `reasoningTokens` (already part of `output_tokens`). `raw` is Anthropic's usage
 * object as it came, kept beside the normalised counts.
 */
export function toCanonicalUsage(usage: AnthropicUsage, raw: unknown): CanonicalUsage {
  const cacheRead = usage.cache_read_input_tokens ?? undefined;
  const cacheWrite = usage.cache_creation_input_tokens ?? undefined;
  const inputTokens = (usage.input_tokens ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0);
  const outputTokens = usage.output_tokens ?? 0;
  const canonical: CanonicalUsage = { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
  if (cacheRead !== undefined) canonical.cachedInputTokens = cacheRead;
  if (cacheWrite !== undefined) canonical.cacheWriteInputTokens = cacheWrite;
  const thinkingTokens = usage.output_tokens_details?.thinking_tokens;
  if (typeof thinkingTokens === 'number') canonical.reasoningTokens = thinkingTokens;
  canonical.raw = raw;
  return canonical;
}

/**
 * Merges a stream's later raw usage (`message_delta`, cumulative) over its earlier one (`message_start`): a field
 * the later object reports replaces the earlier one; `null`s and absent fields leave the earlier value standing.
 */
export function mergeAnthropicUsage(
  earlier: Record<string, unknown> | undefined,
  later: Record<string, unknown>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...earlier };
  for (const [key, value] of Object.entries(later)) {
    if (value !== null && value !== undefined) merged[key] = value;
  }
  return merged;
}
