import type { ProviderTranslator } from '../../src/canonical/index.ts';
import { buildGeminiEmbeddingsRequest, parseGeminiEmbeddingsResponse } from './gemini-embeddings.ts';
import { mapGeminiError } from './gemini-error.ts';
import { validateGeminiOptions } from './gemini-options.ts';
import { buildGeminiChatRequest, buildGeminiHealthCheckRequest } from './gemini-request.ts';
import { parseGeminiChatResponse } from './gemini-response.ts';
import { geminiChatStream } from './gemini-stream.ts';

/**
 * The translator for Google's Gemini API (`https://generativelanguage.googleapis.com/v1beta`): chat through
 * `models/{model}:generateContent` and `:streamGenerateContent?alt=sse`, embeddings through `:batchEmbedContents`,
 * the key in `x-goog-api-key`. No client dialect is Gemini's own, so everything is translated.
 *
 * @example
 * ```ts
 * const upstream = geminiTranslator.buildChatRequest(request, target);
 * const response = geminiTranslator.parseChatResponse(await (await fetch(upstream.url, upstream)).json());
 * ```
 */
export const geminiTranslator: ProviderTranslator = {
  id: 'gemini',
  operations: ['chat', 'embeddings'],
  streamFraming: 'sse',
  nativeDialects: [],
  chatFeatures: ['n', 'top-k', 'files', 'images', 'json-schema', 'tools', 'reasoning'],
  buildChatRequest: buildGeminiChatRequest,
  parseChatResponse: (body) => parseGeminiChatResponse(body),
  chatStream: geminiChatStream,
  buildEmbeddingsRequest: buildGeminiEmbeddingsRequest,
  parseEmbeddingsResponse: (body) => parseGeminiEmbeddingsResponse(body),
  buildHealthCheckRequest: buildGeminiHealthCheckRequest,
  validateOptions: validateGeminiOptions,
  mapError: mapGeminiError,
};
