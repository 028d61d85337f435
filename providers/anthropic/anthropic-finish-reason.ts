import type { CanonicalFinishReason } from '../../src/canonical/index.ts';

const unifiedByStopReason: Record<string, CanonicalFinishReason['unified']> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool-calls',
  refusal: 'content-filter',
  pause_turn: 'other',
};

/**
 * Normalises Anthropic's `stop_reason`, keeping the raw value. `answeredWithJsonTool` is true when the model's only
 * tool call was the gateway's JSON response tool (see `anthropic-json-response.ts`): for the client that is a
 * finished answer, so `tool_use` becomes `stop`.
 */
export function mapAnthropicFinishReason(
  stopReason: string | null | undefined,
  answeredWithJsonTool = false,
): CanonicalFinishReason {
  const raw = stopReason ?? undefined;
  if (raw === 'tool_use' && answeredWithJsonTool) return { unified: 'stop', raw };
  return { unified: (raw === undefined ? undefined : unifiedByStopReason[raw]) ?? 'other', raw };
}
