import * as z from 'zod/mini';
import type { CanonicalUsage } from '../../src/canonical/index.ts';
import { upstreamError, type GatewayError } from '../../src/errors.ts';

/** A part of a Gemini answer: only the fields the gateway reads. */
export const geminiResponsePartSchema = z.object({
  text: z.nullish(z.string()),
  thought: z.nullish(z.boolean()),
  thoughtSignature: z.nullish(z.string()),
  functionCall: z.nullish(
    z.object({ id: z.nullish(z.string()), name: z.string(), args: z.nullish(z.record(z.string(), z.unknown())) }),
  ),
});

/** A Gemini part, as read. */
export type GeminiResponsePart = z.infer<typeof geminiResponsePartSchema>;

/** `usageMetadata` of a Gemini answer. */
export const geminiUsageMetadataSchema = z.object({
  promptTokenCount: z.nullish(z.number()),
  candidatesTokenCount: z.nullish(z.number()),
  cachedContentTokenCount: z.nullish(z.number()),
  thoughtsTokenCount: z.nullish(z.number()),
  toolUsePromptTokenCount: z.nullish(z.number()),
  totalTokenCount: z.nullish(z.number()),
});

/** One candidate of a Gemini answer. */
export const geminiCandidateSchema = z.object({
  // Candidates are few (`candidateCount` is at most 8): an index outside 0-63 is a broken answer, not state to keep.
  index: z.nullish(z.int().check(z.gte(0), z.lte(63))),
  content: z.nullish(z.object({ role: z.nullish(z.string()), parts: z.nullish(z.array(geminiResponsePartSchema)) })),
  finishReason: z.nullish(z.string()),
});

/** A GenerateContentResponse, or one chunk of `streamGenerateContent` (each chunk is a whole response object). */
export const geminiGenerateContentResponseSchema = z.object({
  candidates: z.nullish(z.array(geminiCandidateSchema)),
  promptFeedback: z.nullish(z.object({ blockReason: z.nullish(z.string()) })),
  usageMetadata: z.nullish(geminiUsageMetadataSchema),
  modelVersion: z.nullish(z.string()),
  responseId: z.nullish(z.string()),
});

/** A Gemini answer or stream chunk, as read. */
export type GeminiGenerateContentResponse = z.infer<typeof geminiGenerateContentResponseSchema>;

/**
 * Gemini's `usageMetadata` in canonical terms. Input is `promptTokenCount` (cached tokens included) plus
 * `toolUsePromptTokenCount` (results of server-side tools, billed as input); output is `candidatesTokenCount` plus
 * `thoughtsTokenCount`, since Google counts thinking apart from the candidates but bills it as output;
 * `cachedContentTokenCount` is the cached input, `thoughtsTokenCount` the reasoning tokens. The total is Google's
 * (the sum of the same four counts). The raw object is kept.
 *
 * @example
 * toCanonicalGeminiUsage({ promptTokenCount: 10, candidatesTokenCount: 5, thoughtsTokenCount: 20, totalTokenCount: 35 }, raw);
 * // { inputTokens: 10, outputTokens: 25, totalTokens: 35, reasoningTokens: 20, raw }
 */
export function toCanonicalGeminiUsage(usage: z.infer<typeof geminiUsageMetadataSchema>, raw: unknown): CanonicalUsage {
  const inputTokens = (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0);
  const reasoningTokens = usage.thoughtsTokenCount ?? 0;
  const outputTokens = (usage.candidatesTokenCount ?? 0) + reasoningTokens;
  const canonical: CanonicalUsage = {
    inputTokens,
    outputTokens,
    totalTokens: usage.totalTokenCount ?? inputTokens + outputTokens,
  };
  if (usage.cachedContentTokenCount !== undefined && usage.cachedContentTokenCount !== null) {
    canonical.cachedInputTokens = usage.cachedContentTokenCount;
  }
  if (reasoningTokens > 0) canonical.reasoningTokens = reasoningTokens;
  canonical.raw = raw;
  return canonical;
}

/**
 * A 502 `upstream_invalid_response` for a successful Gemini body the gateway cannot read.
 *
 * @example
 * throw invalidGeminiResponse('gemini', 'Gemini sent an answer without candidates.', body);
 */
export function invalidGeminiResponse(provider: string, message: string, upstreamBody: unknown): GatewayError {
  return upstreamError('upstream_invalid_response', provider, message, { retryable: true, upstreamBody });
}

/** The fields a schema failure names, for messages. */
export function invalidFields(error: { issues: readonly { path: readonly PropertyKey[] }[] }): string {
  return error.issues.map((issue) => issue.path.map(String).join('.') || '(root)').join(', ');
}
