import { dropRejectedAzureToken } from './azure-authentication.ts';
import type { ProviderTranslator } from '../../src/canonical/index.ts';
import { mapAzureOpenAIError } from './azure-error.ts';
import { validateAzureOptions } from './azure-options.ts';
import {
  buildAzureChatRequest,
  buildAzureEmbeddingsRequest,
  buildAzureHealthCheckRequest,
  buildAzureNativeRequest,
} from './azure-request.ts';
import {
  azureOpenAIChatStream,
  parseAzureOpenAIChatResponse,
  parseAzureOpenAIEmbeddingsResponse,
} from './azure-response.ts';

/**
 * The translator for Azure OpenAI (and Azure AI Foundry resources' OpenAI endpoints): the OpenAI-compatible
 * translator's bodies, parsers and stream reducer, with Azure's URLs (the v1 API by default, or the classic
 * deployment URL with a dated `api-version`), its credentials (`api-key`, or a Microsoft Entra ID bearer token, static
 * or fetched with client credentials and cached), and its errors (content filter, `DeploymentNotFound`, the
 * `{statusCode, message}` 401). OpenAI chat, embeddings and Responses clients are passed through natively.
 *
 * `top-k` is not offered: Azure has no `top_k`. Image generation is not a canonical operation (the seam has chat and
 * embeddings only).
 *
 * @example
 * const request = await azureOpenAITranslator.buildChatRequest(canonicalRequest, {
 *   providerName: 'azure', baseURL: 'https://contoso.openai.azure.com', model: 'gpt-4o-prod',
 *   apiKey: process.env.AZURE_OPENAI_API_KEY, headers: {}, options: {},
 * });
 * const response = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body });
 * const canonical = azureOpenAITranslator.parseChatResponse(await response.json());
 */
export const azureOpenAITranslator: ProviderTranslator = {
  id: 'azure-openai',
  operations: ['chat', 'embeddings'],
  streamFraming: 'sse',
  nativeDialects: ['openai-chat', 'openai-embeddings', 'openai-responses'],
  buildNativeRequest: buildAzureNativeRequest,
  buildHealthCheckRequest: buildAzureHealthCheckRequest,
  chatFeatures: ['n', 'logprobs', 'files', 'images', 'json-schema', 'tools', 'reasoning'],
  buildChatRequest: buildAzureChatRequest,
  parseChatResponse: parseAzureOpenAIChatResponse,
  chatStream: azureOpenAIChatStream,
  buildEmbeddingsRequest: buildAzureEmbeddingsRequest,
  parseEmbeddingsResponse: parseAzureOpenAIEmbeddingsResponse,
  validateOptions: validateAzureOptions,
  onCredentialsRejected: dropRejectedAzureToken,
  mapError: mapAzureOpenAIError,
};
