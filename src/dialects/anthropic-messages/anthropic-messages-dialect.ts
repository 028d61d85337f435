import type { CanonicalChatRequest } from '../../canonical/canonical-chat-request.ts';
import type { CanonicalChatResponse } from '../../canonical/canonical-chat-response.ts';
import type { ClientDialect } from '../dialect.ts';
import { checkAnthropicAnswer } from './anthropic-messages-answer-check.ts';
import { createAnthropicNativeStreamTap } from './anthropic-messages-native-tap.ts';
import { renderAnthropicMessagesResponse } from './anthropic-messages-render-response.ts';
import { createAnthropicStreamRenderer, renderAnthropicStreamBreak } from './anthropic-messages-render-stream.ts';
import {
  validateAnthropicMessagesRequest,
  type AnthropicMessagesRequest,
} from './anthropic-messages-request-schema.ts';
import { anthropicMessagesToCanonical } from './anthropic-messages-to-canonical.ts';

/**
 * Anthropic Messages (`POST /v1/messages`), the API of Claude Code, the Claude Agent SDK and `@anthropic-ai/sdk`.
 * Deployments that speak it natively (Anthropic) get the client's body untouched but for the model name, with the
 * client's `anthropic-version` and `anthropic-beta`, so prompt caching, thinking signatures, documents, citations,
 * server tools and betas keep working; every other provider is translated through the canonical form and its stream
 * re-rendered in Anthropic's event grammar.
 *
 * @example
 * app.post('/v1/messages', handleModelRequest(modelRoute(dependencies, anthropicMessagesDialect, chatOperation)));
 */
export const anthropicMessagesDialect: ClientDialect<
  AnthropicMessagesRequest,
  CanonicalChatRequest,
  CanonicalChatResponse
> = {
  id: 'anthropic-messages',
  errorDialect: 'anthropic',
  parseRequest: validateAnthropicMessagesRequest,
  summarize: (request) => ({
    model: request.model,
    stream: request.stream === true,
    maxOutputTokens: request.max_tokens,
  }),
  featureParameters: {
    n: 'n',
    logprobs: 'logprobs',
    'top-k': 'top_k',
    files: 'messages',
    images: 'messages',
    'json-schema': 'output_format',
    tools: 'tools',
    reasoning: 'thinking',
    documents: 'documents',
  },
  forwardedHeaders: ['anthropic-version', 'anthropic-beta'],
  toCanonical: anthropicMessagesToCanonical,
  nativeBody: (_request, body, target) => ({ ...body, model: target.model }),
  checkNativeAnswer: checkAnthropicAnswer,
  createNativeStreamTap: (_request, options) => createAnthropicNativeStreamTap(options),
  renderResponse: (answer, request) => JSON.stringify(renderAnthropicMessagesResponse(answer, request.model)),
  createStreamRenderer: (request, context) =>
    createAnthropicStreamRenderer({ ...context, requestModel: request.model }),
  renderStreamBreak: renderAnthropicStreamBreak,
};
