import { dropRejectedVertexToken } from './vertex-credentials.ts';
import type { ChatStreamReducer, ProviderTranslator } from '../../src/canonical/index.ts';
import {
  createGeminiChatStream,
  geminiTranslator,
  parseGeminiChatResponse,
  type GeminiStreamState,
} from '../gemini/index.ts';
import { buildVertexEmbeddingsRequest, parseVertexEmbeddingsResponse } from './vertex-embeddings.ts';
import { mapVertexError, vertexErrorMapper } from './vertex-error.ts';
import { buildVertexGeminiChatRequest, validateVertexGeminiOptions } from './vertex-gemini-request.ts';
import { vertexProviderId } from './vertex-options.ts';

/**
 * The Gemini stream reducer over Vertex's `streamGenerateContent?alt=sse` (the same chunks as the Gemini API's), with
 * Vertex's error mapper for error chunks.
 */
export const vertexGeminiChatStream: ChatStreamReducer<GeminiStreamState> = createGeminiChatStream(
  vertexProviderId,
  vertexErrorMapper,
);

/**
 * The translator for Google's models on Vertex AI (`publishers/google/models/{model}`): Gemini chat through
 * `:generateContent` and `:streamGenerateContent?alt=sse` (SSE), with the Gemini translator's body, response reader and
 * stream reducer, and text embeddings through `:predict` (`text-embedding-005`, `gemini-embedding-001` ...).
 * Authentication is OAuth: a service account's self-signed token (cached and refreshed) or a given access token.
 * Claude models on Vertex are served by `vertexAnthropicTranslator` instead.
 *
 * It declares the Gemini translator's chat features (Vertex takes the same body) and no native dialect: no client
 * dialect the gateway speaks is Vertex's own.
 *
 * @example
 * const upstream = await vertexGeminiTranslator.buildChatRequest(request, target);
 * const response = vertexGeminiTranslator.parseChatResponse(await (await fetch(upstream.url, upstream)).json());
 */
export const vertexGeminiTranslator: ProviderTranslator = {
  id: 'vertex',
  operations: ['chat', 'embeddings'],
  streamFraming: 'sse',
  nativeDialects: [],
  chatFeatures: geminiTranslator.chatFeatures,
  buildChatRequest: (request, target) => buildVertexGeminiChatRequest(request, target),
  parseChatResponse: (body) => parseGeminiChatResponse(body, vertexProviderId),
  chatStream: vertexGeminiChatStream,
  buildEmbeddingsRequest: (request, target) => buildVertexEmbeddingsRequest(request, target),
  parseEmbeddingsResponse: parseVertexEmbeddingsResponse,
  validateOptions: validateVertexGeminiOptions,
  onCredentialsRejected: dropRejectedVertexToken,
  mapError: mapVertexError,
};
