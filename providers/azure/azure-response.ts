import type {
  CanonicalChatResponse,
  CanonicalEmbeddingsResponse,
  CanonicalStreamPart,
  ChatStreamReducer,
} from '../../src/canonical/index.ts';
import type { DecodedStreamEvent } from '../../src/framing/index.ts';
import { isOpenAICompatibleErrorBody } from '../openai-compatible/openai-compatible-error.ts';
import {
  parseOpenAICompatibleChatResponse,
  parseOpenAICompatibleEmbeddingsResponse,
} from '../openai-compatible/openai-compatible-response.ts';
import {
  openAICompatibleChatStream,
  type OpenAICompatibleStreamState,
} from '../openai-compatible/openai-compatible-stream.ts';
import { mapAzureOpenAIInBandError } from './azure-error.ts';

/**
 * Reads an Azure OpenAI chat completion: OpenAI's shape, read by the OpenAI-compatible parser. Azure's additions
 * (`prompt_filter_results`, each choice's `content_filter_results`) are not read; a completion its filter stopped
 * has `finish_reason: "content_filter"` (unified `content-filter`, raw kept). An error object in a 200 body is mapped
 * as Azure's.
 *
 * @example
 * parseAzureOpenAIChatResponse(await response.json()).choices[0]?.finishReason; // { unified: 'stop', raw: 'stop' }
 */
export function parseAzureOpenAIChatResponse(body: unknown): CanonicalChatResponse {
  if (isOpenAICompatibleErrorBody(body)) throw mapAzureOpenAIInBandError(body);
  return parseOpenAICompatibleChatResponse(body);
}

/**
 * Reads an Azure OpenAI embeddings response (OpenAI's shape).
 *
 * @example
 * parseAzureOpenAIEmbeddingsResponse(await response.json()).data[0]?.embedding;
 */
export function parseAzureOpenAIEmbeddingsResponse(body: unknown): CanonicalEmbeddingsResponse {
  if (isOpenAICompatibleErrorBody(body)) throw mapAzureOpenAIInBandError(body);
  return parseOpenAICompatibleEmbeddingsResponse(body);
}

/**
 * The reducer over Azure OpenAI chat streams: the OpenAI-compatible reducer, which already lets Azure's first chunk
 * (empty `id`, `choices: []`, `prompt_filter_results`) pass without starting the response and ignores each choice's
 * `content_filter_results`; an `{error:{...}}` event is mapped as Azure's error.
 *
 * @example
 * const state = azureOpenAIChatStream.init();
 * for (const event of events) parts.push(...azureOpenAIChatStream.onEvent(state, event));
 * parts.push(...azureOpenAIChatStream.onEnd(state, { sentinel: true }));
 */
export const azureOpenAIChatStream: ChatStreamReducer<OpenAICompatibleStreamState> = {
  init: openAICompatibleChatStream.init,
  onEvent(state: OpenAICompatibleStreamState, event: DecodedStreamEvent): CanonicalStreamPart[] {
    if (isOpenAICompatibleErrorBody(event.data)) throw mapAzureOpenAIInBandError(event.data);
    return openAICompatibleChatStream.onEvent(state, event);
  },
  onEnd: openAICompatibleChatStream.onEnd,
};
