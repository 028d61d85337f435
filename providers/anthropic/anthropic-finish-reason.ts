import type { CanonicalFinishReason } from '../../src/canonical/index.ts';
import { unifiedOfAnthropicStopReason } from '../../src/canonical/wire/anthropic-stop-reasons.ts';

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
  return { unified: (raw === undefined ? undefined : unifiedOfAnthropicStopReason[raw]) ?? 'other', raw };
}
