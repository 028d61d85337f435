/**
 * Anthropic's usage object on the wire, read by the Anthropic translator (upstream answers) and the Anthropic
 * Messages dialect (pass-through taps, rendering): one API's wire format shared by its provider and its client
 * dialect, kept beside the canonical usage it maps to and from.
 */
import * as z from 'zod/mini';
import type { CanonicalUsage } from '../canonical-usage.ts';

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

/** Anthropic's wire usage object as the gateway renders it for an Anthropic client. */
export interface AnthropicWireUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/**
 * Canonical usage in Anthropic's accounting, the inverse of {@link toCanonicalUsage}: `input_tokens` excludes the
 * tokens read from and written to the prompt cache, which are reported apart (0 when the upstream reported none).
 */
export function toAnthropicUsage(usage: CanonicalUsage): AnthropicWireUsage {
  const cacheRead = usage.cachedInputTokens ?? 0;
  const cacheWrite = usage.cacheWriteInputTokens ?? 0;
  return {
    input_tokens: Math.max(0, usage.inputTokens - cacheRead - cacheWrite),
    output_tokens: usage.outputTokens,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
  };
}
