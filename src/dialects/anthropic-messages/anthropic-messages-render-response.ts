import type { CanonicalToolCall } from '../../canonical/canonical-chat-request.ts';
import type { CanonicalChatResponse } from '../../canonical/canonical-chat-response.ts';
import { parseJson } from '../../framing/parse-json.ts';
import { anthropicStopReason } from './anthropic-messages-stop-reason.ts';
import { toAnthropicUsage } from '../../canonical/wire/anthropic-wire-usage.ts';

/**
 * An Anthropic message id (`msg_...`) for a provider's response id: kept when it already is one, else `msg_` and the
 * id's letters, digits and underscores (a random suffix when none are left).
 *
 * @example
 * anthropicMessageId('chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT'); // 'msg_chatcmplB9MBs8CjcvOU2jLn4n570S5qMJKcT'
 */
export function anthropicMessageId(id: string): string {
  if (id.startsWith('msg_')) return id;
  const kept = id.replace(/[^A-Za-z0-9_]/g, '');
  return `msg_${kept.length > 0 ? kept : crypto.randomUUID().replaceAll('-', '')}`;
}

/**
 * Renders a translated, complete chat response as an Anthropic `message` object (the body of a non-streamed
 * `POST /v1/messages`). The content is choice 0's, in Anthropic's order: a `thinking` block when the provider returned
 * reasoning, a `text` block (the refusal when the model refused without text), then one `tool_use` block per call.
 * `stop_reason` and `usage` are in Anthropic's terms (`input_tokens` without the cached tokens).
 *
 * @example
 * const body = JSON.stringify(renderAnthropicMessagesResponse(answer, request.model));
 */
export function renderAnthropicMessagesResponse(
  response: CanonicalChatResponse,
  requestModel: string,
): Record<string, unknown> {
  const choice = response.choices[0];
  const content: Record<string, unknown>[] = [];
  if (choice?.reasoning !== undefined) {
    content.push({ type: 'thinking', thinking: choice.reasoning, signature: choice.reasoningSignature ?? '' });
  }
  const text = choice?.text != null && choice.text.length > 0 ? choice.text : (choice?.refusal ?? '');
  if (text.length > 0) content.push({ type: 'text', text });
  for (const call of choice?.toolCalls ?? []) {
    content.push({ type: 'tool_use', id: call.id, name: call.name, input: toolInput(call) });
  }
  return {
    id: anthropicMessageId(response.id),
    type: 'message',
    role: 'assistant',
    model: response.model.length > 0 ? response.model : requestModel,
    content,
    stop_reason: anthropicStopReason(choice?.finishReason ?? { unified: 'stop', raw: undefined }),
    stop_sequence: null,
    usage: toAnthropicUsage(response.usage ?? { inputTokens: 0, outputTokens: 0, totalTokens: 0 }),
  };
}

/**
 * A tool call's arguments as the JSON object Anthropic's `input` must be. Never throws: empty arguments are `{}`,
 * and arguments that are not a JSON object are kept as text under `arguments`.
 */
function toolInput(call: CanonicalToolCall): Record<string, unknown> {
  if (call.arguments.trim().length === 0) return {};
  const parsed = parseJson(call.arguments);
  if (parsed.ok && typeof parsed.value === 'object' && parsed.value !== null && !Array.isArray(parsed.value)) {
    return parsed.value as Record<string, unknown>;
  }
  return { arguments: call.arguments };
}
