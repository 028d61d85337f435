import type { CanonicalFinishReason } from '../../src/canonical/index.ts';

/**
 * Gemini's `finishReason` values (google.ai.generativelanguage FinishReason, the same on Vertex AI) and what each
 * means for the client. The safety family (output withheld by a filter: safety, recitation, blocklist, prohibited
 * content, personal data, image safety) is `content-filter`; an invalid function call the model produced is `error`;
 * `LANGUAGE` (an unsupported language), `TOO_MANY_TOOL_CALLS`, `OTHER` and values added later are `other`.
 */
const unifiedByFinishReason: Readonly<Record<string, CanonicalFinishReason['unified']>> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content-filter',
  RECITATION: 'content-filter',
  BLOCKLIST: 'content-filter',
  PROHIBITED_CONTENT: 'content-filter',
  SPII: 'content-filter',
  IMAGE_SAFETY: 'content-filter',
  IMAGE_PROHIBITED_CONTENT: 'content-filter',
  IMAGE_RECITATION: 'content-filter',
  MALFORMED_FUNCTION_CALL: 'error',
  UNEXPECTED_TOOL_CALL: 'error',
  LANGUAGE: 'other',
  TOO_MANY_TOOL_CALLS: 'other',
  OTHER: 'other',
  FINISH_REASON_UNSPECIFIED: 'other',
};

/**
 * Normalises a candidate's `finishReason`, keeping the raw value. Gemini ends a turn of function calls with `STOP`:
 * when the candidate called functions (`calledFunctions`), `STOP` is `tool-calls`, as OpenAI clients expect.
 *
 * @example
 * mapGeminiFinishReason('STOP', true); // { unified: 'tool-calls', raw: 'STOP' }
 */
export function mapGeminiFinishReason(
  finishReason: string | undefined,
  calledFunctions: boolean,
): CanonicalFinishReason {
  if (finishReason === 'STOP' && calledFunctions) return { unified: 'tool-calls', raw: finishReason };
  return {
    unified: (finishReason === undefined ? undefined : unifiedByFinishReason[finishReason]) ?? 'other',
    raw: finishReason,
  };
}

/**
 * The finish of an answer Gemini refused to start: the prompt was blocked (`promptFeedback.blockReason`, no
 * candidates). It is answered as an empty choice finished by `content-filter`, not as an error: OpenAI clients then
 * see `finish_reason: "content_filter"`, exactly as from OpenAI or Azure when a prompt is filtered, and the request is
 * not retried on another deployment (it would be blocked there too). The raw value is the block reason.
 *
 * @example
 * blockedPromptFinishReason('SAFETY'); // { unified: 'content-filter', raw: 'SAFETY' }
 */
export function blockedPromptFinishReason(blockReason: string): CanonicalFinishReason {
  return { unified: 'content-filter', raw: blockReason };
}
