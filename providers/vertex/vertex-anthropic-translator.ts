import { dropRejectedVertexToken } from './vertex-credentials.ts';
import type { ChatStreamReducer, ProviderTranslator } from '../../src/canonical/index.ts';
import { anthropicChatStream, parseAnthropicChatResponse, type AnthropicStreamState } from '../anthropic/index.ts';
import {
  buildVertexAnthropicChatRequest,
  buildVertexAnthropicNativeRequestWithCredentials,
} from './vertex-anthropic-request.ts';
import { mapVertexError, vertexErrorMapper } from './vertex-error.ts';
import { validateVertexOptions } from './vertex-options.ts';

/**
 * Anthropic's stream reducer (`:streamRawPredict` sends Anthropic's own SSE events), except that an `error` event is
 * mapped by the Vertex mapper, so a mid-stream failure names Vertex, like the HTTP errors of the same deployment.
 */
export const vertexAnthropicChatStream: ChatStreamReducer<AnthropicStreamState> = {
  init: () => anthropicChatStream.init(),
  onEvent(state, event) {
    const data = event.data;
    const isError =
      event.type === 'error' ||
      (typeof data === 'object' && data !== null && (data as Record<string, unknown>).type === 'error');
    if (isError) throw vertexErrorMapper.mapInBand(data);
    return anthropicChatStream.onEvent(state, event);
  },
  onEnd: (state, ending) => anthropicChatStream.onEnd(state, ending),
  isComplete: (state) => anthropicChatStream.isComplete?.(state) ?? false,
};

/**
 * The translator for Anthropic's Claude models on Vertex AI (`publishers/anthropic/models/{model}:rawPredict` and
 * `:streamRawPredict`, SSE streams): Anthropic's Messages request and answers (built and read by the Anthropic
 * translator's own functions), Vertex's URL, OAuth credentials and `anthropic_version` body field, and both error
 * envelopes (Google's and Anthropic's). Models are Vertex's Claude ids, e.g. `claude-sonnet-4-5@20250929`.
 *
 * Anthropic Messages clients (and their token counting) are passed through untouched but for the model, which moves
 * into the URL, and the `anthropic_version` body field Vertex wants.
 *
 * @example
 * const upstream = await vertexAnthropicTranslator.buildChatRequest(request, target);
 * const response = vertexAnthropicTranslator.parseChatResponse(await (await fetch(upstream.url, upstream)).json());
 */
export const vertexAnthropicTranslator: ProviderTranslator = {
  id: 'vertex-anthropic',
  operations: ['chat'],
  streamFraming: 'sse',
  nativeDialects: ['anthropic-messages', 'anthropic-count-tokens'],
  buildNativeRequest: (dialect, body, target, clientHeaders) =>
    buildVertexAnthropicNativeRequestWithCredentials(dialect, body, target, clientHeaders),
  chatFeatures: ['top-k', 'files', 'images', 'json-schema', 'tools', 'reasoning'],
  buildChatRequest: (request, target) => buildVertexAnthropicChatRequest(request, target),
  parseChatResponse: parseAnthropicChatResponse,
  chatStream: vertexAnthropicChatStream,
  validateOptions: validateVertexOptions,
  onCredentialsRejected: dropRejectedVertexToken,
  mapError: mapVertexError,
};
