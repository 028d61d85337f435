import type { ProviderTranslator } from '../../src/canonical/index.ts';
import { anthropicChatStream, parseAnthropicChatResponse } from '../anthropic/index.ts';
import { buildBedrockAnthropicChatRequest, buildBedrockAnthropicNativeRequest } from './bedrock-anthropic-request.ts';
import { mapBedrockError } from './bedrock-error.ts';
import { validateBedrockOptions } from './bedrock-options.ts';

/**
 * The translator for Claude on Amazon Bedrock through InvokeModel (`POST /model/{modelId}/invoke`, and
 * `invoke-with-response-stream`, an AWS binary event stream) in Anthropic's own Messages format: the request is built,
 * and the answer read, by the Anthropic translator's functions, so Claude's features (extended thinking, tool use,
 * prompt-cache usage) go as on Anthropic's API; the Bedrock translator's endpoint, options and credentials (SigV4 or a
 * Bedrock API key) apply.
 *
 * - Answers: InvokeModel's body is Anthropic's Message object ({@link parseAnthropicChatResponse}). A stream's `chunk`
 *   messages each carry one of Anthropic's events, base64 in `{"bytes": ...}`; the shared AWS event-stream decoder
 *   unwraps them, so Anthropic's reducer ({@link anthropicChatStream}) reads them as it reads Anthropic's SSE. The
 *   `amazon-bedrock-invocationMetrics` Bedrock adds to `message_stop` is ignored (the usage is Anthropic's own,
 *   cache reads and writes included). An Anthropic `error` event inside a chunk is mapped by Anthropic's mapper, which
 *   knows its envelope (`{type:"error",error:{type:"overloaded_error",...}}`); Bedrock's own stream failures come as
 *   exception messages, thrown by the shared decoder.
 * - HTTP errors are Bedrock's (`x-amzn-errortype` and `{"message": ...}`): {@link mapBedrockError}.
 * - Anthropic Messages clients are passed through (the model moved into the URL, the stream flag into the endpoint,
 *   beta headers into `anthropic_beta`). Token counting is not: Bedrock's is a separate API with its own body.
 * - No health check, for the Bedrock translator's reason: the model list is on the control-plane host.
 *
 * @example
 * ```ts
 * const upstream = await bedrockAnthropicTranslator.buildChatRequest(request, {
 *   providerName: 'bedrock-anthropic', baseURL: '', model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
 *   apiKey: undefined, headers: {}, options: { region: 'us-east-1', accessKeyId: 'AKIA...', secretAccessKey: '...' },
 * });
 * const response = bedrockAnthropicTranslator.parseChatResponse(await (await fetch(upstream.url, upstream)).json());
 * ```
 */
export const bedrockAnthropicTranslator: ProviderTranslator = {
  id: 'bedrock-anthropic',
  operations: ['chat'],
  streamFraming: 'aws-event-stream',
  nativeDialects: ['anthropic-messages'],
  buildNativeRequest: buildBedrockAnthropicNativeRequest,
  chatFeatures: ['top-k', 'files', 'images', 'json-schema', 'tools', 'reasoning'],
  buildChatRequest: buildBedrockAnthropicChatRequest,
  parseChatResponse: parseAnthropicChatResponse,
  chatStream: anthropicChatStream,
  validateOptions: validateBedrockOptions,
  mapError: mapBedrockError,
};
