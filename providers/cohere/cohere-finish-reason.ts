import type { CanonicalFinishReason } from '../../src/canonical/index.ts';

/**
 * Cohere's `finish_reason` values and the unified reason each means. `TIMEOUT` ("the generation was stopped because
 * it exceeded the allowed time limit") is the provider cutting the answer short on its side, an `error` like `ERROR`
 * rather than a `length` the client's `max_tokens` caused.
 */
const unifiedOfCohereFinishReason: Readonly<Record<string, CanonicalFinishReason['unified']>> = {
  COMPLETE: 'stop',
  STOP_SEQUENCE: 'stop',
  MAX_TOKENS: 'length',
  TOOL_CALL: 'tool-calls',
  ERROR: 'error',
  TIMEOUT: 'error',
};

/**
 * Normalises Cohere's `finish_reason`, keeping the raw value; an unknown value is `other`.
 *
 * @example
 * mapCohereFinishReason('MAX_TOKENS'); // { unified: 'length', raw: 'MAX_TOKENS' }
 */
export function mapCohereFinishReason(finishReason: string | null | undefined): CanonicalFinishReason {
  const raw = finishReason ?? undefined;
  return { unified: (raw === undefined ? undefined : unifiedOfCohereFinishReason[raw]) ?? 'other', raw };
}
