import type { ProviderTranslator } from '../../src/canonical/index.ts';
import { mapAnthropicError } from './anthropic-error.ts';
import { buildAnthropicChatRequest, validateAnthropicOptions } from './anthropic-request.ts';
import { parseAnthropicChatResponse } from './anthropic-response.ts';
import { anthropicChatStream } from './anthropic-stream.ts';

/**
 * The translator for Anthropic's Messages API (`POST /v1/messages`, SSE streams): chat only, no native client
 * dialect yet (an Anthropic Messages client dialect would pass through here once the gateway speaks it).
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
  nativeDialects: [],
  buildChatRequest: buildAnthropicChatRequest,
  parseChatResponse: parseAnthropicChatResponse,
  chatStream: anthropicChatStream,
  validateOptions: validateAnthropicOptions,
  mapError: mapAnthropicError,
};
