import type { CanonicalUsage } from '../../canonical/canonical-usage.ts';

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Reads an OpenAI wire `usage` object (non-streamed or the final stream chunk) into canonical usage. */
export function usageFromOpenAIWire(usage: unknown): CanonicalUsage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const wire = usage as Record<string, unknown>;
  const inputTokens = count(wire.prompt_tokens);
  const outputTokens = count(wire.completion_tokens);
  if (inputTokens === undefined && outputTokens === undefined) return undefined;
  const promptDetails = wire.prompt_tokens_details as Record<string, unknown> | null | undefined;
  const completionDetails = wire.completion_tokens_details as Record<string, unknown> | null | undefined;
  const result: CanonicalUsage = {
    inputTokens: inputTokens ?? 0,
    outputTokens: outputTokens ?? 0,
    totalTokens: count(wire.total_tokens) ?? (inputTokens ?? 0) + (outputTokens ?? 0),
    raw: usage,
  };
  const cached = count(promptDetails?.cached_tokens);
  if (cached !== undefined) result.cachedInputTokens = cached;
  const reasoning = count(completionDetails?.reasoning_tokens);
  if (reasoning !== undefined) result.reasoningTokens = reasoning;
  return result;
}
