/**
 * Token usage as the provider reported it, normalised to OpenAI's accounting:
 * `inputTokens` counts every prompt token, including the cached ones and the ones written to a cache
 * (Anthropic reports those apart from `input_tokens`; its translator adds them back).
 * `outputTokens` counts every generated token, including reasoning tokens.
 */
export interface CanonicalUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** Prompt tokens read from the provider's prompt cache. */
  cachedInputTokens?: number;
  /** Prompt tokens written to the provider's prompt cache (Anthropic cache_creation_input_tokens). */
  cacheWriteInputTokens?: number;
  /** Output tokens spent on reasoning (part of outputTokens). */
  reasoningTokens?: number;
  /** The provider's usage object, untouched. */
  raw?: unknown;
}
