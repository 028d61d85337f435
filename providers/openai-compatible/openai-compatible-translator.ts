import type { ProviderTranslator } from '../../src/canonical/index.ts';
import { mapOpenAICompatibleError } from './openai-compatible-error.ts';
import {
  buildOpenAICompatibleChatRequest,
  buildOpenAICompatibleEmbeddingsRequest,
  buildOpenAICompatibleHealthCheckRequest,
  buildOpenAICompatibleNativeRequest,
  validateOpenAICompatibleOptions,
} from './openai-compatible-request.ts';
import {
  parseOpenAICompatibleChatResponse,
  parseOpenAICompatibleEmbeddingsResponse,
} from './openai-compatible-response.ts';
import { openAICompatibleChatStream } from './openai-compatible-stream.ts';

/**
 * The translator for OpenAI and every OpenAI-shaped upstream (Groq, Mistral, Together, DeepSeek, xAI, Fireworks,
 * OpenRouter, Ollama, vLLM ...). Clients speaking OpenAI chat or embeddings are passed through to these upstreams
 * without it (`nativeDialects`); it translates for the other client dialects.
 *
 * @example
 * const request = openAICompatibleTranslator.buildChatRequest(canonicalRequest, target);
 * const response = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body });
 * const canonical = openAICompatibleTranslator.parseChatResponse(await response.json());
 */
export const openAICompatibleTranslator: ProviderTranslator = {
  id: 'openai-compatible',
  operations: ['chat', 'embeddings'],
  streamFraming: 'sse',
  nativeDialects: ['openai-chat', 'openai-embeddings', 'openai-responses', 'openai-completions'],
  buildNativeRequest: buildOpenAICompatibleNativeRequest,
  buildHealthCheckRequest: buildOpenAICompatibleHealthCheckRequest,
  chatFeatures: ['n', 'logprobs', 'top-k', 'files', 'images', 'json-schema', 'tools', 'reasoning'],
  buildChatRequest: buildOpenAICompatibleChatRequest,
  parseChatResponse: parseOpenAICompatibleChatResponse,
  chatStream: openAICompatibleChatStream,
  buildEmbeddingsRequest: buildOpenAICompatibleEmbeddingsRequest,
  parseEmbeddingsResponse: parseOpenAICompatibleEmbeddingsResponse,
  validateOptions: validateOpenAICompatibleOptions,
  mapError: mapOpenAICompatibleError,
};
