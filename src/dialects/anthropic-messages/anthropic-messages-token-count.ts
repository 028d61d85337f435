import { isGatewayError } from '../../errors.ts';
import { countChatTokens } from '../../tokens/count-chat-tokens.ts';
import type { Tokenizer } from '../../tokens/token-counter.ts';
import type { AnthropicCountTokensRequest } from './anthropic-messages-request-schema.ts';
import { anthropicMessagesToCanonical } from './anthropic-messages-to-canonical.ts';

/**
 * A Messages request's input tokens counted with a real tokenizer, as the translated request reaches a non-Anthropic
 * upstream: the request goes through the same translation as `POST /v1/messages` (one system message, tool results
 * as tool messages, `tool_use` as tool calls with JSON arguments, thinking dropped, text documents as text) and is
 * counted by countChatTokens. Undefined when the request cannot be translated (server tools, blocks only Anthropic
 * can replay): `/v1/messages` would refuse it, but counting answers the estimate rather than stop a client.
 *
 * @example
 * const tokenizer = await counter.tokenizerFor(deployment.target.model);
 * const tokens = tokenizer && countAnthropicInputTokensWith(validateAnthropicCountTokensRequest(body), tokenizer);
 */
export function countAnthropicInputTokensWith(
  request: AnthropicCountTokensRequest,
  tokenizer: Tokenizer,
): number | undefined {
  let canonical;
  try {
    // count_tokens takes no max_tokens; the translation wants one, and it is no part of the prompt.
    canonical = anthropicMessagesToCanonical({ ...request, max_tokens: 1 });
  } catch (error) {
    if (isGatewayError(error)) return undefined;
    throw error;
  }
  return countChatTokens(canonical, tokenizer);
}
