import type { ProviderTranslator } from '../../src/canonical/index.ts';
import { buildCohereEmbeddingsRequest, parseCohereEmbeddingsResponse } from './cohere-embeddings.ts';
import { mapCohereError } from './cohere-error.ts';
import { validateCohereOptions } from './cohere-options.ts';
import { buildCohereChatRequest, buildCohereHealthCheckRequest } from './cohere-request.ts';
import { parseCohereChatResponse } from './cohere-response.ts';
import { cohereChatStream } from './cohere-stream.ts';

/**
 * The translator for Cohere's v2 API (`POST /v2/chat`, SSE streams with named events; `POST /v2/embed`): chat and
 * embeddings translated from the client dialects. Cohere speaks no client dialect natively, so nothing is passed
 * through. Images (vision models), tools, JSON schemas, top-k and reasoning (`thinking`) are carried; several
 * choices, log probabilities and files are not. Cohere's answers do not name their model: responses and streams
 * carry an empty model, which the renderers replace with the model the gateway called.
 *
 * @example
 * ```ts
 * const upstream = cohereTranslator.buildChatRequest(request, target);
 * const response = cohereTranslator.parseChatResponse(await (await fetch(upstream.url, upstream)).json());
 * ```
 */
export const cohereTranslator: ProviderTranslator = {
  id: 'cohere',
  operations: ['chat', 'embeddings'],
  streamFraming: 'sse',
  nativeDialects: [],
  buildHealthCheckRequest: buildCohereHealthCheckRequest,
  chatFeatures: ['top-k', 'images', 'json-schema', 'tools', 'reasoning', 'documents'],
  buildChatRequest: buildCohereChatRequest,
  parseChatResponse: parseCohereChatResponse,
  chatStream: cohereChatStream,
  buildEmbeddingsRequest: buildCohereEmbeddingsRequest,
  parseEmbeddingsResponse: parseCohereEmbeddingsResponse,
  validateOptions: validateCohereOptions,
  mapError: mapCohereError,
};
