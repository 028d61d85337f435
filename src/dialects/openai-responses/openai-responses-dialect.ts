import type { CanonicalChatRequest } from '../../canonical/canonical-chat-request.ts';
import type { CanonicalChatResponse } from '../../canonical/canonical-chat-response.ts';
import type { ClientDialect, StreamRenderer } from '../dialect.ts';
import { checkOpenAIResponsesAnswer } from './openai-responses-answer-check.ts';
import { createResponsesNativeStreamTap } from './openai-responses-native-tap.ts';
import { newResponseId, renderOpenAIResponse } from './openai-responses-render-response.ts';
import { createResponsesStreamRenderer, renderResponsesStreamBreak } from './openai-responses-render-stream.ts';
import { validateOpenAIResponsesRequest, type OpenAIResponsesRequest } from './openai-responses-request-schema.ts';
import { openAIResponsesToCanonical } from './openai-responses-to-canonical.ts';

/**
 * One Responses API call on its way through the gateway: the client's request, the id and time the gateway gives a
 * translated response, the earlier conversation when it continues one, and what came back (for storing).
 */
export interface ResponsesCall {
  body: OpenAIResponsesRequest;
  /** The gateway's id for a translated response (`resp_…`); a native upstream's answer keeps its own. */
  id: string;
  /** Unix seconds. */
  createdAt: number;
  /** The conversation `previous_response_id` continues (stored input and output items, oldest first). */
  history: readonly Record<string, unknown>[];
  /** The Response object a translated answer was rendered as (JSON answers and finished streams). */
  response: Record<string, unknown> | undefined;
  /** The renderer of a translated stream, whose final response is stored when the stream is over. */
  streamRenderer: (StreamRenderer & { finalResponse(): Record<string, unknown> | undefined }) | undefined;
  /** The terminal Response object a native upstream streamed. */
  nativeResponse: Record<string, unknown> | undefined;
  /** Set once what came back has been stored (or found not to be kept). */
  settled: boolean;
}

/**
 * OpenAI Responses (`POST /v1/responses`), the API of Codex, the OpenAI Agents SDK and new `openai` SDK code.
 * Deployments that serve it natively (OpenAI) get the client's body with the upstream model name, and keep the
 * conversation themselves; every other provider is translated through the canonical form, with the gateway keeping
 * the conversation (see the Responses lifecycle in the routes) and the stream re-rendered in the Responses grammar.
 *
 * @example
 * app.post('/v1/responses', handleModelRequest(modelRoute(dependencies, openAIResponsesDialect, chatOperation, lifecycle)));
 */
export const openAIResponsesDialect: ClientDialect<ResponsesCall, CanonicalChatRequest, CanonicalChatResponse> = {
  id: 'openai-responses',
  errorDialect: 'openai',
  parseRequest: (body) => ({
    body: validateOpenAIResponsesRequest(body),
    id: newResponseId(),
    createdAt: Math.floor(Date.now() / 1000),
    history: [],
    response: undefined,
    streamRenderer: undefined,
    nativeResponse: undefined,
    settled: false,
  }),
  summarize: (call) => ({
    model: call.body.model,
    stream: call.body.stream === true,
    maxOutputTokens: call.body.max_output_tokens ?? 0,
  }),
  featureParameters: {
    n: 'n',
    logprobs: 'top_logprobs',
    'top-k': 'top_k',
    files: 'input',
    images: 'input',
    'json-schema': 'text.format',
    tools: 'tools',
    reasoning: 'reasoning.effort',
    documents: 'documents',
  },
  toCanonical: (call) => openAIResponsesToCanonical(call.body, call.history),
  nativeBody: (_call, body, target) => ({ ...body, model: target.model }),
  checkNativeAnswer: checkOpenAIResponsesAnswer,
  createNativeStreamTap: (call, options) =>
    createResponsesNativeStreamTap({ ...options, onResponse: (response) => (call.nativeResponse = response) }),
  renderResponse(answer, call) {
    call.response = renderOpenAIResponse(answer, { id: call.id, createdAt: call.createdAt, request: call.body });
    return JSON.stringify(call.response);
  },
  createStreamRenderer(call, context) {
    call.streamRenderer = createResponsesStreamRenderer({
      ...context,
      responseId: call.id,
      createdAt: call.createdAt,
      request: call.body,
    });
    return call.streamRenderer;
  },
  renderStreamBreak: (error) => renderResponsesStreamBreak(error),
};
