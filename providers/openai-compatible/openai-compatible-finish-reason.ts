import type { CanonicalFinishReason } from '../../src/canonical/index.ts';

/**
 * OpenAI `finish_reason` values (and the spellings OpenAI-compatible servers use for the same thing) by the
 * canonical reason they mean. `function_call` is OpenAI's legacy spelling of `tool_calls`; `model_length` is
 * Mistral's; `eos` is what older Together and TGI builds send; `error` (Mistral, OpenRouter) and
 * `insufficient_system_resource` (DeepSeek) say the upstream gave up mid-answer.
 */
const unifiedFinishReasons: Record<string, CanonicalFinishReason['unified']> = {
  stop: 'stop',
  eos: 'stop',
  length: 'length',
  model_length: 'length',
  tool_calls: 'tool-calls',
  function_call: 'tool-calls',
  content_filter: 'content-filter',
  error: 'error',
  insufficient_system_resource: 'error',
};

/**
 * Normalises an OpenAI-compatible `finish_reason`, keeping the upstream's value as `raw`.
 *
 * `hasToolCalls` corrects one known quirk: some servers (older Ollama and vLLM tool parsers) answer `stop` although
 * the choice called tools. Clients that run tools when the reason is "tool calls" (Anthropic's `tool_use`) would
 * then stop, so a `stop` with tool calls is reported as `tool-calls`; `raw` still says `stop`.
 *
 * @example
 * mapOpenAICompatibleFinishReason('length', false); // { unified: 'length', raw: 'length' }
 */
export function mapOpenAICompatibleFinishReason(
  raw: string | null | undefined,
  hasToolCalls: boolean,
): CanonicalFinishReason {
  if (raw === null || raw === undefined) return { unified: 'other', raw: undefined };
  const unified = unifiedFinishReasons[raw] ?? 'other';
  return { unified: unified === 'stop' && hasToolCalls ? 'tool-calls' : unified, raw };
}
