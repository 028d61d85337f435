import type { ProviderTranslator } from '../../src/canonical/index.ts';
import { mapAnthropicError } from './anthropic-error.ts';
import {
  buildAnthropicChatRequest,
  buildAnthropicHealthCheckRequest,
  buildAnthropicNativeRequest,
  validateAnthropicOptions,
} from './anthropic-request.ts';
import { parseAnthropicChatResponse } from './anthropic-response.ts';
import { anthropicChatStream } from './anthropic-stream.ts';

/**
 * The translator for Anthropic's Messages API (`POST /v1/messages`, SSE streams): chat, translated from the OpenAI
 * dialects, and Anthropic Messages clients (and their token counting) passed through untouched but for the model.
 *
 * @example
 * ```ts
 * const upstream = anthropicTranslator.buildChatRequest(request, target);
 * const response = anthropicTranslator.parseChatResponse(await (await fetch(upstream.url, upstream)).json());
 * ```
 */
export const anthropicTranslator: ProviderTranslator = {
  id: 'anthropic',
  operations: ['chat'],
  streamFraming: 'sse',
  nativeDialects: ['anthropic-messages', 'anthropic-count-tokens'],
  buildNativeRequest: buildAnthropicNativeRequest,
  buildHealthCheckRequest: buildAnthropicHealthCheckRequest,
  chatFeatures: ['top-k', 'files', 'images', 'json-schema', 'tools', 'reasoning'],
  buildChatRequest: buildAnthropicChatRequest,
  parseChatResponse: parseAnthropicChatResponse,
  chatStream: anthropicChatStream,
  validateOptions: validateAnthropicOptions,
  mapError: mapAnthropicError,
};
