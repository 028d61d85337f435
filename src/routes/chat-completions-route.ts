import { isPlainOpenAIChatRequest } from '../dialects/openai-chat/openai-chat-plain-check.ts';
import { openAIChatRequestSchema, type OpenAIChatRequest } from '../dialects/openai-chat/openai-chat-request-schema.ts';
import { renderOpenAIChatResponse } from '../dialects/openai-chat/openai-chat-render-response.ts';
import { openAIChatToCanonical } from '../dialects/openai-chat/openai-chat-to-canonical.ts';
import { checkOpenAIAnswer } from '../dialects/openai-chat/openai-answer-check.ts';
import { invalidRequest, isGatewayError } from '../errors.ts';
import type { ResolvedDeployment } from '../routing/resolved-deployment.ts';
import { firstValidationProblem } from '../validation/zod-issues.ts';
import { authenticateRequest } from './authenticate-request.ts';
import type { UpstreamResponse } from '../services.ts';
import { isUpstreamLimitError } from '../upstream/upstream-limit-error.ts';
import { callDeployment, readUpstreamText, upstreamReadFailure } from './call-upstream.ts';
import {
  checkedOpenAIAnswer,
  eventStreamResponse,
  invalidUpstreamAnswer,
  jsonResponse,
  openAIStreamBreakEvent,
  parseUpstreamAnswer,
} from './gateway-responses.ts';
import { createOpenAIPassthroughTransformer } from './chat-passthrough-stream.ts';
import { createTranslatedChatTransformer } from './chat-translated-stream.ts';
import type { StreamEnd } from './stream-response.ts';
import { transformBody, type TransformBodyOptions } from './transform-body.ts';
import type { RouteDependencies } from './gateway-context.ts';
import type { GatewayContext } from '../gateway-environment.ts';
import { readJsonObjectBody } from './read-json-body.ts';
import { admitRequest, estimateTokensFromText, finishRequest } from './request-accounting.ts';
import type { RequestRecord } from './request-record.ts';
import { resolveDeployment } from './resolve-route.ts';

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

/**
 * `POST /v1/chat/completions`: authenticate, parse once, route, then either pass the body through to an upstream
 * that speaks OpenAI chat (minimal edits) or translate it for one that does not. Streams are piped, never buffered.
 */
export function createChatCompletionsHandler(dependencies: RouteDependencies) {
  return async (c: GatewayContext): Promise<Response> => {
    const record = c.var.record;
    record.operation = 'chat';
    const request = c.req.raw;
    const auth = await authenticateRequest(dependencies, request, record);
    const measured = { textLength: 0 };
    const body = await readJsonObjectBody(request, dependencies, measured);
    const chat = validateOpenAIChatRequest(body);
    record.stream = chat.stream === true;
    record.estimatedInputTokens = estimateTokensFromText(measured.textLength);
    const deployment = resolveDeployment(dependencies, auth, chat.model, 'chat', record);
    const admitted = admitRequest(dependencies, auth, record, chat.max_completion_tokens ?? chat.max_tokens ?? 0);
    if (admitted !== undefined) await admitted;
    if (deployment.translator.nativeDialects.includes('openai-chat')) {
      return passThroughChat(dependencies, deployment, body, chat, request.signal, record);
    }
    return translateChat(dependencies, deployment, chat, request.signal, record);
  };
}

/**
 * The usage and outcome a stream reports when it is over become the request's end (see finishRequest); the request is
 * left to the stream once eventStreamResponse has built the response around it.
 */
function finishStream(dependencies: RouteDependencies, record: RequestRecord): StreamEnd {
  return (usage, failure) => {
    record.usage = usage;
    finishRequest(dependencies, record, streamOutcomeStatus(failure));
  };
}

/** How a stream's end reads in the ledger and metrics: 200, 499 (the client left) or the failure's status. */
function streamOutcomeStatus(failure: unknown): number {
  if (failure === undefined) return 200;
  if (isGatewayError(failure)) return failure.status;
  if (isUpstreamLimitError(failure)) return failure.limit === 'body-too-large' ? 502 : 504;
  return 499;
}

/** How the streams of a deployment are watched: the break event, the first-byte time and the idle timeout. */
function streamWatch(
  dependencies: RouteDependencies,
  deployment: ResolvedDeployment,
  record: RequestRecord,
): TransformBodyOptions {
  const providerName = deployment.target.providerName;
  return {
    renderSourceError: (error) =>
      openAIStreamBreakEvent(upstreamReadFailure(error, providerName, dependencies.redactor, true)),
    onFirstOutput: () => (record.firstByteAt = dependencies.services.now()),
    idleTimeoutMs: deployment.limits.streamIdleTimeoutMs,
    now: dependencies.services.now,
  };
}

/**
 * The answer to a stream request must be an event stream. An upstream that sends JSON or HTML instead (an error
 * object with a 200, a proxy's error page) gets a 502 that carries the upstream's own error message when it had one,
 * before anything is sent to the client.
 */
async function requireEventStream(
  response: UpstreamResponse,
  dependencies: RouteDependencies,
  deployment: ResolvedDeployment,
  record: RequestRecord,
): Promise<ReadableStream<Uint8Array>> {
  const contentType = response.contentType ?? '';
  if (response.body !== null && !/json|html/i.test(contentType)) return response.body;
  const text = await readUpstreamText(response, dependencies, deployment, record);
  const check = checkOpenAIAnswer(text);
  const upstreamMessage = check.ok ? undefined : check.errorMessage;
  throw invalidUpstreamAnswer(
    deployment.target.providerName,
    `a stream was asked for, but it answered with ${contentType || 'no content type'}` +
      (upstreamMessage === undefined ? '' : `: ${dependencies.redactor.redact(upstreamMessage)}`),
  );
}

async function passThroughChat(
  dependencies: RouteDependencies,
  deployment: ResolvedDeployment,
  body: Record<string, unknown>,
  chat: OpenAIChatRequest,
  clientSignal: AbortSignal,
  record: RequestRecord,
): Promise<Response> {
  const { translator, target } = deployment;
  const upstreamBody: Record<string, unknown> = { ...body, model: target.model };
  const clientWantsUsage = chat.stream_options?.include_usage === true;
  if (record.stream) upstreamBody.stream_options = { ...chat.stream_options, include_usage: true };
  // resolveModelGroups guarantees buildNativeRequest for translators that declare native dialects.
  const upstreamRequest = translator.buildNativeRequest!('openai-chat', upstreamBody, target);
  const response = await callDeployment(dependencies, deployment, upstreamRequest, clientSignal, record);
  if (record.stream) {
    const source = await requireEventStream(response, dependencies, deployment, record);
    const stream = transformBody(
      source,
      createOpenAIPassthroughTransformer({
        clientWantsUsage,
        providerName: target.providerName,
        redactor: dependencies.redactor,
        onEnd: finishStream(dependencies, record),
      }),
      streamWatch(dependencies, deployment, record),
    );
    return eventStreamResponse(dependencies, record, stream);
  }
  // Same dialect: the upstream's bytes go to the client untouched once checked; only the usage object is parsed.
  const text = await readUpstreamText(response, dependencies, deployment, record);
  record.usage = checkedOpenAIAnswer(text, target.providerName, dependencies.redactor);
  return jsonResponse(dependencies, record, text);
}

async function translateChat(
  dependencies: RouteDependencies,
  deployment: ResolvedDeployment,
  chat: OpenAIChatRequest,
  clientSignal: AbortSignal,
  record: RequestRecord,
): Promise<Response> {
  const { translator, target } = deployment;
  const canonical = openAIChatToCanonical(chat);
  const upstreamRequest = await translator.buildChatRequest(canonical, target);
  const response = await callDeployment(dependencies, deployment, upstreamRequest, clientSignal, record);
  if (canonical.stream) {
    const source = await requireEventStream(response, dependencies, deployment, record);
    const stream = transformBody(
      source,
      createTranslatedChatTransformer({
        translator,
        providerName: target.providerName,
        includeUsage: canonical.streamIncludeUsage,
        fallbackModel: target.model,
        redactor: dependencies.redactor,
        onEnd: finishStream(dependencies, record),
      }),
      streamWatch(dependencies, deployment, record),
    );
    return eventStreamResponse(dependencies, record, stream);
  }
  const text = await readUpstreamText(response, dependencies, deployment, record);
  const answer = parseUpstreamAnswer(text, target.providerName, dependencies.jsonLimits);
  const canonicalResponse = translator.parseChatResponse(answer);
  record.usage = canonicalResponse.usage;
  return jsonResponse(dependencies, record, JSON.stringify(renderOpenAIChatResponse(canonicalResponse)));
}
