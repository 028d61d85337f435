import type { CanonicalUsage } from '../../canonical/canonical-usage.ts';

/** The Responses API's usage object, as OpenAI shapes it. */
export interface ResponsesWireUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** Canonical usage in the Responses API's shape (cached and reasoning tokens 0 when the upstream reported none). */
export function toResponsesUsage(usage: CanonicalUsage): ResponsesWireUsage {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens ?? 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.totalTokens,
  };
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/**
 * Reads a Responses usage object an upstream sent (a same-dialect answer, `response.completed`); undefined when it is
 * absent or carries no token counts. `raw` keeps the object as it came.
 */
export function usageFromResponsesWire(value: unknown): CanonicalUsage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const wire = value as Record<string, unknown>;
  const inputTokens = count(wire.input_tokens);
  const outputTokens = count(wire.output_tokens);
  if (inputTokens === undefined && outputTokens === undefined) return undefined;
  const usage: CanonicalUsage = {
    inputTokens: inputTokens ?? 0,
    outputTokens: outputTokens ?? 0,
    totalTokens: count(wire.total_tokens) ?? (inputTokens ?? 0) + (outputTokens ?? 0),
    raw: value,
  };
  const cached = count((wire.input_tokens_details as Record<string, unknown> | null | undefined)?.cached_tokens);
  if (cached !== undefined) usage.cachedInputTokens = cached;
  const reasoning = count((wire.output_tokens_details as Record<string, unknown> | null | undefined)?.reasoning_tokens);
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return usage;
}
