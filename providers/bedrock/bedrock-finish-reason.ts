import type { CanonicalFinishReason } from '../../src/canonical/index.ts';

/**
 * Converse's `stopReason` values and the unified finish reason each means. A guardrail's intervention and a content
 * filter are both `content-filter` (the client's content policy fallbacks apply); a malformed model output or tool
 * call is the model's error.
 */
const unifiedOfStopReason: Readonly<Record<string, CanonicalFinishReason['unified']>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool-calls',
  guardrail_intervened: 'content-filter',
  content_filtered: 'content-filter',
  malformed_model_output: 'error',
  malformed_tool_use: 'error',
};

/**
 * Normalises Converse's `stopReason`, keeping the raw value. `answeredWithJsonTool` is true when the model's only tool
 * call was the gateway's JSON response tool (see `bedrock-request.ts`): for the client that is a finished answer, so
 * `tool_use` becomes `stop`.
 */
export function mapBedrockFinishReason(
  stopReason: string | null | undefined,
  answeredWithJsonTool = false,
): CanonicalFinishReason {
  const raw = stopReason ?? undefined;
  if (raw === 'tool_use' && answeredWithJsonTool) return { unified: 'stop', raw };
  return { unified: (raw === undefined ? undefined : unifiedOfStopReason[raw]) ?? 'other', raw };
}
