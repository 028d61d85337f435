import type { CanonicalFinishReason } from '../../canonical/canonical-chat-response.ts';
import { unifiedOfAnthropicStopReason } from '../../canonical/wire/anthropic-stop-reasons.ts';

const stopReasonByUnified: Record<CanonicalFinishReason['unified'], string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  'tool-calls': 'tool_use',
  'content-filter': 'refusal',
  error: 'end_turn',
  other: 'end_turn',
};

/**
 * Anthropic's `stop_reason` for a canonical finish reason: the upstream's own value when it is one of Anthropic's and
 * agrees with the unified reason (an Anthropic upstream behind a translated route), else the unified reason's
 * Anthropic name. `stoppedBySequence` (the upstream named the stop sequence it hit) turns a natural stop into
 * `stop_sequence`.
 */
export function anthropicStopReason(reason: CanonicalFinishReason, stoppedBySequence = false): string {
  // Kept only when it means what the unified reason says: the JSON-answer tool's `tool_use` is a `stop` to the client.
  if (reason.raw !== undefined && unifiedOfAnthropicStopReason[reason.raw] === reason.unified) return reason.raw;
  if (reason.unified === 'stop' && stoppedBySequence) return 'stop_sequence';
  return stopReasonByUnified[reason.unified];
}
