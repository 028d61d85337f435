import type { CanonicalUsage } from '../canonical/canonical-usage.ts';
import { isPlainOpenAIChatRequest } from '../dialects/openai-chat/openai-chat-plain-check.ts';
import { openAIChatRequestSchema, type OpenAIChatRequest } from '../dialects/openai-chat/openai-chat-request-schema.ts';
import { renderOpenAIChatResponse } from '../dialects/openai-chat/openai-chat-render-response.ts';
import { openAIChatToCanonical } from '../dialects/openai-chat/openai-chat-to-canonical.ts';
import { usageFromOpenAIText } from '../dialects/openai-chat/openai-usage-from-text.ts';
import { invalidRequest } from '../errors.ts';
import { parseJson } from '../framing/parse-json.ts';
import type { ResolvedDeployment } from '../routing/resolved-deployment.ts';
import { firstValidationProblem } from '../validation/zod-issues.ts';
import { authenticateRequest } from './authenticate-request.ts';
import { callDeployment, readUpstreamText } from './call-upstream.ts';
import { eventStreamResponse, invalidUpstreamBody, jsonResponse, openAIStreamBreakEvent } from './gateway-responses.ts';
import { createOpenAIPassthroughTransformer } from './chat-passthrough-stream.ts';
import { createTranslatedChatTransformer } from './chat-translated-stream.ts';
import { transformBody } from './transform-body.ts';
import type { GatewayContext, RouteDependencies } from './gateway-context.ts';
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

function finishStream(
  dependencies: RouteDependencies,
  record: RequestRecord,
): (usage: CanonicalUsage | undefined) => void {
  record.finishWhenStreamEnds = true;
  return (usage) => {
    record.usage = usage;
    finishRequest(dependencies, record, 200);
  };
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
  if (record.stream && response.body !== null) {
    const stream = transformBody(
      response.body,
      createOpenAIPassthroughTransformer(clientWantsUsage, finishStream(dependencies, record)),
      openAIStreamBreakEvent(target.providerName),
      () => (record.firstByteAt = dependencies.services.now()),
    );
    return eventStreamResponse(dependencies, record, stream);
  }
  // Same dialect: the upstream's bytes go to the client untouched; only the usage object is read from them.
  const text = await readUpstreamText(response, dependencies.services, record);
  record.usage = usageFromOpenAIText(text);
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
  if (canonical.stream && response.body !== null) {
    const stream = transformBody(
      response.body,
      createTranslatedChatTransformer({
        translator,
        providerName: target.providerName,
        includeUsage: canonical.streamIncludeUsage,
        fallbackModel: target.model,
        onEnd: finishStream(dependencies, record),
      }),
      openAIStreamBreakEvent(target.providerName),
      () => (record.firstByteAt = dependencies.services.now()),
    );
    return eventStreamResponse(dependencies, record, stream);
  }
  const text = await readUpstreamText(response, dependencies.services, record);
  const parsed = parseJson(text);
  if (!parsed.ok) throw invalidUpstreamBody(target.providerName, parsed.error);
  const canonicalResponse = translator.parseChatResponse(parsed.value);
  record.usage = canonicalResponse.usage;
  return jsonResponse(dependencies, record, JSON.stringify(renderOpenAIChatResponse(canonicalResponse)));
}
