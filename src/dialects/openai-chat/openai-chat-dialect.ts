import type { CanonicalChatRequest } from '../../canonical/canonical-chat-request.ts';
import type { CanonicalChatResponse } from '../../canonical/canonical-chat-response.ts';
import { invalidRequest } from '../../errors.ts';
import { firstValidationProblem } from '../../validation/zod-issues.ts';
import type { UpstreamTarget } from '../../canonical/provider-translator.ts';
import type { CancellableTransformer } from '../../framing/stream-end.ts';
import type { ClientDialect, NativeStreamTapOptions } from '../dialect.ts';
import { checkOpenAIAnswer } from './openai-answer-check.ts';
import { createOpenAIPassthroughTransformer } from './openai-chat-native-tap.ts';
import { isPlainOpenAIChatRequest } from './openai-chat-plain-check.ts';
import { renderOpenAIChatResponse } from './openai-chat-render-response.ts';
import { createOpenAIChatStreamRenderer, renderOpenAIStreamBreak } from './openai-chat-render-stream.ts';
import { openAIChatRequestSchema, type OpenAIChatRequest } from './openai-chat-request-schema.ts';
import { openAIChatToCanonical } from './openai-chat-to-canonical.ts';
import { verbatimTextCheck } from '../verbatim-native-text.ts';

/** The keys the gateway routes, checks or accounts a chat request by: each must occur once to send the text as is. */
const sendsAsParsed = verbatimTextCheck(['model', 'stream', 'stream_options', 'include_usage']);

/**
 * Validates a parsed body against the OpenAI chat schema; a violation is a 400 whose `param` names the field. Plain
 * text requests are vouched for by a quick check and skip the full schema walk.
 */
export function validateOpenAIChatRequest(body: Record<string, unknown>): OpenAIChatRequest {
  if (isPlainOpenAIChatRequest(body)) return body as OpenAIChatRequest;
  const result = openAIChatRequestSchema.safeParse(body);
  if (!result.success) {
    const problem = firstValidationProblem(result.error.issues);
    throw invalidRequest(problem.message, problem.param);
  }
  return result.data;
}

/** The stream fields of OpenAI's streaming APIs (chat and legacy completions). */
interface OpenAIStreamingRequest {
  stream?: boolean | null | undefined;
  stream_options?: { include_usage?: boolean | null | undefined } | null | undefined;
}

/**
 * The body for a same-dialect OpenAI upstream: the client's, with the upstream model name and, on streams,
 * `stream_options.include_usage` (the usage chunk the gateway needs; the tap removes it again when the client did not
 * ask for it).
 */
export function openAINativeBody(
  request: OpenAIStreamingRequest,
  body: Record<string, unknown>,
  target: UpstreamTarget,
): Record<string, unknown> {
  const upstreamBody: Record<string, unknown> = { ...body, model: target.model };
  if (request.stream === true) upstreamBody.stream_options = { ...request.stream_options, include_usage: true };
  return upstreamBody;
}

/** The usage tap of a same-dialect OpenAI stream (chat or legacy completions), told whether the client wants usage. */
export function createOpenAINativeStreamTap(
  request: OpenAIStreamingRequest,
  options: NativeStreamTapOptions,
): CancellableTransformer<Uint8Array, Uint8Array> {
  return createOpenAIPassthroughTransformer({
    ...options,
    clientWantsUsage: request.stream_options?.include_usage === true,
  });
}

/**
 * OpenAI chat completions (`POST /v1/chat/completions`), the lingua franca of LLM clients. Same-dialect upstreams get
 * the client's body with the upstream model name and, on streams, `stream_options.include_usage` (the usage chunk is
 * removed again when the client did not ask for it).
 *
 * @example
 * app.post('/v1/chat/completions', handleModelRequest(modelRoute(dependencies, openAIChatDialect, chatOperation)));
 */
export const openAIChatDialect: ClientDialect<OpenAIChatRequest, CanonicalChatRequest, CanonicalChatResponse> = {
  id: 'openai-chat',
  errorDialect: 'openai',
  parseRequest: validateOpenAIChatRequest,
  summarize: (request) => ({
    model: request.model,
    stream: request.stream === true,
    maxOutputTokens: request.max_completion_tokens ?? request.max_tokens ?? 0,
  }),
  featureParameters: {
    n: 'n',
    logprobs: 'logprobs',
    'top-k': 'top_k',
    files: 'messages',
    images: 'messages',
    'json-schema': 'response_format',
    tools: 'tools',
    reasoning: 'reasoning_effort',
    documents: 'documents',
  },
  toCanonical: openAIChatToCanonical,
  nativeBody(request, body, target) {
    const upstreamBody: Record<string, unknown> = { ...body, model: target.model };
    if (request.stream === true) upstreamBody.stream_options = { ...request.stream_options, include_usage: true };
    return upstreamBody;
  },
  nativeText(request, body, text, target) {
    if (body.model !== target.model) return undefined;
    if (request.stream === true && request.stream_options?.include_usage !== true) return undefined;
    return sendsAsParsed(text) ? text : undefined;
  },
  checkNativeAnswer: checkOpenAIAnswer,
  createNativeStreamTap: (request, options) =>
    createOpenAIPassthroughTransformer({
      ...options,
      clientWantsUsage: request.stream_options?.include_usage === true,
    }),
  renderResponse: (answer) => JSON.stringify(renderOpenAIChatResponse(answer)),
  createStreamRenderer: (request, context) =>
    createOpenAIChatStreamRenderer(request.stream_options?.include_usage === true, context.fallbackModel),
  renderStreamBreak: renderOpenAIStreamBreak,
};
