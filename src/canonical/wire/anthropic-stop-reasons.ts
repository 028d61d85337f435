import type { CanonicalFinishReason } from '../canonical-chat-response.ts';

/**
 * Anthropic's stop reasons and the unified finish reason each means: read by the Anthropic translator (upstream
 * answers) and the Anthropic Messages dialect (which keeps an upstream's own reason when it agrees).
 */
export const unifiedOfAnthropicStopReason: Readonly<Record<string, CanonicalFinishReason['unified']>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool-calls',
  refusal: 'content-filter',
  pause_turn: 'other',
};
