import * as z from 'zod/mini';
import type { CanonicalUsage } from '../../src/canonical/index.ts';

/**
 * Converse's `TokenUsage` (the non-streamed response's `usage`, the stream's `metadata.usage`): only the counts the
 * gateway reads, each optional so that a partial object still reads.
 */
export const bedrockUsageSchema = z.object({
  inputTokens: z.nullish(z.number()),
  outputTokens: z.nullish(z.number()),
  totalTokens: z.nullish(z.number()),
  cacheReadInputTokens: z.nullish(z.number()),
  cacheWriteInputTokens: z.nullish(z.number()),
});

/** A parsed Converse usage object. */
export type BedrockUsage = z.infer<typeof bedrockUsageSchema>;

/**
 * Converts Converse usage to the gateway's OpenAI accounting. Converse's `inputTokens` counts only the prompt tokens
 * neither read from nor written to the prompt cache (AWS's prompt caching guide: total input = `inputTokens` +
 * `cacheReadInputTokens` + `cacheWriteInputTokens`, and Bedrock's own `totalTokens` adds all three to the output), as
 * Anthropic's `input_tokens` does; so `inputTokens` adds both back, and they are also reported apart (only when
 * Bedrock reported them). Bedrock does not break reasoning tokens out of `outputTokens`. `raw` is Bedrock's object.
 *
 * @example
 * toCanonicalBedrockUsage({ inputTokens: 4, outputTokens: 832, cacheReadInputTokens: 1490 }, raw);
 * // { inputTokens: 1494, outputTokens: 832, totalTokens: 2326, cachedInputTokens: 1490, raw }
 */
export function toCanonicalBedrockUsage(usage: BedrockUsage, raw: unknown): CanonicalUsage {
  const cacheRead = usage.cacheReadInputTokens ?? undefined;
  const cacheWrite = usage.cacheWriteInputTokens ?? undefined;
  const inputTokens = (usage.inputTokens ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0);
  const outputTokens = usage.outputTokens ?? 0;
  const canonical: CanonicalUsage = { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
  if (cacheRead !== undefined) canonical.cachedInputTokens = cacheRead;
  if (cacheWrite !== undefined) canonical.cacheWriteInputTokens = cacheWrite;
  canonical.raw = raw;
  return canonical;
}
