import type { ProviderTranslator } from '../../src/canonical/index.ts';
import { buildBedrockEmbeddingsRequest, parseBedrockEmbeddingsResponse } from './bedrock-embeddings.ts';
import { mapBedrockError } from './bedrock-error.ts';
import { validateBedrockOptions } from './bedrock-options.ts';
import { buildBedrockChatRequest } from './bedrock-request.ts';
import { parseBedrockChatResponse } from './bedrock-response.ts';
import { bedrockChatStream } from './bedrock-stream.ts';

/**
 * The translator for Amazon Bedrock: chat through the Converse API (`POST /model/{modelId}/converse`, and
 * `converse-stream`, an AWS binary event stream), embeddings through InvokeModel with Titan or Cohere Embed models.
 * Requests are signed with SigV4 (IAM access keys in the options) or carry a Bedrock API key (the deployment's
 * `apiKey`). No client dialect is passed through (Converse is no client's API), and there is no health check: the
 * model list is on the `bedrock` control-plane host, not the runtime endpoint the deployment names.
 *
 * @example
 * ```ts
 * const upstream = await bedrockTranslator.buildChatRequest(request, {
 *   providerName: 'bedrock', baseURL: '', model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', apiKey: undefined,
 *   headers: {}, options: { region: 'us-east-1', accessKeyId: 'AKIA...', secretAccessKey: '...' },
 * });
 * const response = bedrockTranslator.parseChatResponse(await (await fetch(upstream.url, upstream)).json());
 * ```
 */
export const bedrockTranslator: ProviderTranslator = {
  id: 'bedrock',
  operations: ['chat', 'embeddings'],
  streamFraming: 'aws-event-stream',
  nativeDialects: [],
  chatFeatures: ['top-k', 'files', 'images', 'json-schema', 'tools', 'reasoning'],
  buildChatRequest: buildBedrockChatRequest,
  parseChatResponse: parseBedrockChatResponse,
  chatStream: bedrockChatStream,
  buildEmbeddingsRequest: buildBedrockEmbeddingsRequest,
  parseEmbeddingsResponse: parseBedrockEmbeddingsResponse,
  validateOptions: validateBedrockOptions,
  mapError: mapBedrockError,
};
