import type { ClientDialect } from '../dialects/dialect.ts';
import { checkOpenAIAnswer } from '../dialects/openai-chat/openai-answer-check.ts';
import { invalidRequest, isGatewayError } from '../errors.ts';
import type { CancellableTransformer, StreamEnd } from '../framing/stream-end.ts';
import type { AuthContext } from '../auth/authenticator.ts';
import { settlingTransformer, type ModelRequestLifecycle } from './request-lifecycle.ts';
import type { GatewayContext } from '../gateway-environment.ts';
import type { ResolvedDeployment } from '../routing/resolved-deployment.ts';
import type { ChunkReader, UpstreamResponse } from '../services.ts';
import { isUpstreamLimitError } from '../upstream/upstream-limit-error.ts';
import { authenticateRequest } from './authenticate-request.ts';
import { callDeployment, readUpstreamText, upstreamReadFailure } from './call-upstream.ts';
import type { RouteDependencies } from './gateway-context.ts';
import {
  eventStreamReply,
  invalidUpstreamAnswer,
  jsonReply,
  parseUpstreamAnswer,
  replyToResponse,
  type ModelReply,
} from './gateway-responses.ts';
import type { ModelOperation } from './model-operation.ts';
import { fetchRequestSource, type ModelRequestSource } from './model-request-source.ts';
import { readJsonObject, type MeasuredBody } from './read-json-body.ts';
import { admitRequest, estimateTokensFromText, finishRequest } from './request-accounting.ts';
import type { RequestRecord } from './request-record.ts';
import { resolveModelGroup } from './resolve-route.ts';
import { groupReachingDeployment, serveWithRetries } from './routed-attempts.ts';
import { readerAfterFirstChunk } from './stream-first-chunk.ts';
import { pickHeaders } from './forwarded-headers.ts';
import { createDeferredEnd, createStreamPump, type DeferredEnd, type TransformBodyOptions } from './transform-body.ts';
import { createTranslatedStreamTransformer } from './translated-stream.ts';
import { openStreamEventDecoder } from '../framing/stream-event-decoder.ts';
import { reframedAsServerSentEvents } from './native-event-stream.ts';

/** One request on its way through the pipeline, past parsing and routing. */
interface RoutedRequest<Request> {
  dependencies: RouteDependencies;
  record: RequestRecord;
  auth: AuthContext;
  deployment: ResolvedDeployment;
  request: Request;
  lifecycle: ModelRequestLifecycle<Request> | undefined;
  clientSignal: AbortSignal;
  /** The client's protocol headers the dialect forwards to a same-dialect upstream. */
  forwardedHeaders: Readonly<Record<string, string>>;
}

/**
 * The one model-request pipeline, for every client dialect and operation: authenticate, read and validate the body
 * in the client's dialect, route, admit (rate limits, budget), then either pass the body through to a deployment that
 * natively speaks the dialect (minimal edits, bytes relayed and tapped for usage) or translate it through the
 * canonical form for one that does not. Streams are piped, never buffered. Every error it throws is rendered in the
 * client's envelope (the record carries the dialect). The answer is a {@link ModelReply}: fetch handlers make it a
 * Response ({@link handleModelRequest}), the Node server writes it to the socket itself.
 *
 * @example
 * const reply = await runModelRequest(dependencies, openAIChatDialect, chatOperation, undefined, record, source);
 */
export async function runModelRequest<Request, Canonical, Answer>(
  dependencies: RouteDependencies,
  dialect: ClientDialect<Request, Canonical, Answer>,
  operation: ModelOperation<Canonical, Answer>,
  lifecycle: ModelRequestLifecycle<Request> | undefined,
  record: RequestRecord,
  source: ModelRequestSource,
): Promise<ModelReply> {
  record.operation = operation.id;
  record.clientApi = dialect.id;
  record.errorDialect = dialect.errorDialect;
  // Both are usually ready at once (a cached key, a body that came with the headers): awaited only when they are not,
  // since every await costs a microtask and a suspension of this function.
  const authenticated = authenticateRequest(dependencies, source, record);
  const auth = authenticated instanceof Promise ? await authenticated : authenticated;
  const measured: MeasuredBody = {};
  const read = readJsonObject(source.readText, dependencies, measured);
  const body = read instanceof Promise ? await read : read;
  // The text is kept for the upstream call only where the dialect may send it as it is (see ClientDialect.nativeText).
  const clientText = dialect.nativeText === undefined ? undefined : measured.text;
  const request = dialect.parseRequest(body);
  const summary = dialect.summarize(request);
  record.stream = summary.stream;
  record.estimatedInputTokens = estimateTokensFromText(measured.text?.length ?? 0);
  const choice =
    lifecycle?.beforeRoute === undefined
      ? undefined
      : await lifecycle.beforeRoute(request, { dependencies, auth, record });
  const group = resolveModelGroup(dependencies, auth, summary.model, operation.id, record);
  const admitted = admitRequest(dependencies, auth, record, summary.maxOutputTokens);
  if (admitted !== undefined) await admitted;
  // A conversation the upstream keeps lives on its deployment (in a fallback group if one served it); one the gateway
  // keeps may move, and prefers its deployment when the requested group has it.
  const conversationId = choice?.deploymentId;
  const translated = choice?.translate === true;
  const pinnedGroup =
    conversationId === undefined || translated
      ? undefined
      : groupReachingDeployment(dependencies.modelGroups, group, conversationId);
  const preferred =
    translated && group.deployments.some((candidate) => candidate.id === conversationId) ? conversationId : undefined;
  const forwardedHeaders = pickHeaders(source.headers, dialect.forwardedHeaders);
  const plan = {
    group: pinnedGroup ?? group,
    operation: operation.id,
    pinnedId: pinnedGroup === undefined ? undefined : conversationId,
    preferredId: preferred,
    maxOutputTokens: summary.maxOutputTokens,
  };
  return serveWithRetries(dependencies, record, plan, source.signal, (deployment) => {
    const routed: RoutedRequest<Request> = {
      dependencies,
      record,
      auth,
      deployment,
      request,
      lifecycle,
      clientSignal: source.signal,
      forwardedHeaders,
    };
    if (deployment.nativeDialects.has(dialect.id) && choice?.translate !== true)
      return passThrough(routed, dialect, body, clientText);
    return translate(routed, dialect, operation);
  });
}

/** One model route, runtime-neutral: a request's record and source in, its reply out (errors are thrown). */
export type ModelRoute = (record: RequestRecord, source: ModelRequestSource) => Promise<ModelReply>;

/**
 * {@link runModelRequest} bound to a dialect and an operation: the route both the Hono app and the Node server's
 * direct path serve.
 *
 * @example
 * const chat = modelRoute(dependencies, openAIChatDialect, chatOperation);
 */
export function modelRoute<Request, Canonical, Answer>(
  dependencies: RouteDependencies,
  dialect: ClientDialect<Request, Canonical, Answer>,
  operation: ModelOperation<Canonical, Answer>,
  lifecycle?: ModelRequestLifecycle<Request>,
): ModelRoute {
  return (record, source) => runModelRequest(dependencies, dialect, operation, lifecycle, record, source);
}

/**
 * A {@link ModelRoute} as a Hono handler.
 *
 * @example
 * app.post('/v1/chat/completions', handleModelRequest(modelRoute(dependencies, openAIChatDialect, chatOperation)));
 */
export function handleModelRequest(route: ModelRoute) {
  return async (c: GatewayContext): Promise<Response> =>
    replyToResponse(await route(c.var.record, fetchRequestSource(c.req.raw)));
}

async function passThrough<Request, Canonical, Answer>(
  routed: RoutedRequest<Request>,
  dialect: ClientDialect<Request, Canonical, Answer>,
  body: Record<string, unknown>,
  clientText: string | undefined,
): Promise<ModelReply> {
  const { dependencies, record, deployment, request } = routed;
  const { translator, target } = deployment;
  // resolveModelGroups admits native dialects only for translators that build native requests.
  const upstreamText = clientText === undefined ? undefined : dialect.nativeText?.(request, body, clientText, target);
  // The text is only given when the body needs no edit: the body then is the native body as it is.
  const upstreamBody = upstreamText === undefined ? dialect.nativeBody(request, body, target) : body;
  const built = translator.buildNativeRequest!(dialect.id, upstreamBody, target, routed.forwardedHeaders, upstreamText);
  // Awaited only when the translator needs to (a token fetch): the common synchronous build costs no microtask.
  const upstreamRequest = built instanceof Promise ? await built : built;
  const response = await callDeployment(dependencies, deployment, upstreamRequest, routed.clientSignal, record);
  if (record.stream && dialect.createNativeStreamTap !== undefined) {
    const source = await requireEventStream(response, routed);
    const ending = createDeferredEnd();
    const ownTap = dialect.createNativeStreamTap(request, {
      providerName: target.providerName,
      redactor: dependencies.redactor,
      onEnd: finishStream(dependencies, record, ending),
    });
    // A dialect's events in another framing (Claude on Bedrock: AWS event-stream chunks) reach its tap as SSE.
    const tap =
      translator.streamFraming === 'sse'
        ? ownTap
        : reframedAsServerSentEvents(
            ownTap,
            await openStreamEventDecoder(translator.streamFraming, target.providerName),
            dialect.renderStreamBreak,
          );
    const settled = settledStream(routed, tap, true);
    return eventStreamReply(
      dependencies,
      record,
      createStreamPump(source, settled, { ...streamWatch(routed, dialect), ending }),
    );
  }
  // Same dialect: the upstream's bytes go to the client untouched once checked; only the usage is read.
  const text = await readUpstreamText(response, dependencies, deployment, record);
  const check = dialect.checkNativeAnswer(text);
  if (!check.ok) {
    const upstreamMessage =
      check.errorMessage === undefined ? '' : ` (${dependencies.redactor.redact(check.errorMessage)})`;
    throw invalidUpstreamAnswer(target.providerName, `${check.reason}${upstreamMessage}`);
  }
  record.usage = check.usage;
  // Awaited only with a lifecycle that settles (stored responses): an await costs a microtask on every request.
  if (routed.lifecycle?.settle !== undefined) await settleAnswer(routed, true, text);
  return jsonReply(dependencies, record, text);
}

async function translate<Request, Canonical, Answer>(
  routed: RoutedRequest<Request>,
  dialect: ClientDialect<Request, Canonical, Answer>,
  operation: ModelOperation<Canonical, Answer>,
): Promise<ModelReply> {
  const { dependencies, record, deployment, request } = routed;
  const { translator, target } = deployment;
  if (dialect.toCanonical === undefined || dialect.renderResponse === undefined) {
    throw invalidRequest(
      `The model \`${record.modelGroup}\` is served by deployment ${deployment.id} (${target.providerName}), which does ` +
        `not serve this API (${dialect.id}) and the gateway cannot translate it.`,
      'model',
      'unsupported_operation',
    );
  }
  const canonical = dialect.toCanonical(request);
  const upstreamRequest = await operation.buildRequest(translator, canonical, target, dialect.featureParameters);
  const response = await callDeployment(dependencies, deployment, upstreamRequest, routed.clientSignal, record);
  if (record.stream && dialect.createStreamRenderer !== undefined && operation.streamReducer !== undefined) {
    const source = await requireEventStream(response, routed);
    const opened = openStreamEventDecoder(translator.streamFraming, target.providerName);
    const decoder = opened instanceof Promise ? await opened : opened;
    const ending = createDeferredEnd();
    const transformer = createTranslatedStreamTransformer({
      decoder,
      reducer: operation.streamReducer(translator),
      renderer: dialect.createStreamRenderer(request, {
        fallbackModel: target.model,
        estimatedInputTokens: record.estimatedInputTokens,
      }),
      providerName: target.providerName,
      redactor: dependencies.redactor,
      onEnd: finishStream(dependencies, record, ending),
    });
    const settled = settledStream(routed, transformer, false);
    return eventStreamReply(
      dependencies,
      record,
      createStreamPump(source, settled, { ...streamWatch(routed, dialect), ending }),
    );
  }
  const text = await readUpstreamText(response, dependencies, deployment, record);
  const answer = operation.parseAnswer(
    translator,
    parseUpstreamAnswer(text, target.providerName, dependencies.jsonLimits),
    target,
  );
  record.usage = operation.usageOf(answer);
  const rendered = dialect.renderResponse(answer, request);
  await settleAnswer(routed, false);
  return jsonReply(dependencies, record, rendered);
}

/** Lets the lifecycle settle a JSON answer (store it) before the client gets it. */
async function settleAnswer<Request>(routed: RoutedRequest<Request>, native: boolean, nativeAnswer?: string) {
  const { lifecycle, dependencies, auth, record, deployment, request } = routed;
  if (lifecycle?.settle === undefined) return;
  await lifecycle.settle(request, {
    dependencies,
    auth,
    record,
    deployment,
    native,
    ...(nativeAnswer === undefined ? {} : { nativeAnswer }),
  });
}

/** A stream transformer whose output waits for the lifecycle to settle what it has seen (see settlingTransformer). */
function settledStream<Request>(
  routed: RoutedRequest<Request>,
  transformer: CancellableTransformer<Uint8Array, Uint8Array>,
  native: boolean,
): CancellableTransformer<Uint8Array, Uint8Array> {
  const { lifecycle, dependencies, auth, record, deployment, request } = routed;
  const settle = lifecycle?.settle;
  if (settle === undefined) return transformer;
  const context = { dependencies, auth, record, deployment, native };
  return settlingTransformer(transformer, () => settle.call(lifecycle, request, context));
}

/**
 * The usage and outcome a stream reports when it is over become the request's end (see finishRequest); the request is
 * left to the stream once eventStreamReply has built the reply around it. The end's bookkeeping (ledger event, limits,
 * spend, metrics) waits in `ending` until the step that carried the stream's last bytes has been handed to the client
 * (see createDeferredEnd): it is not on the way to the client's first byte when a whole answer comes in one read.
 */
function finishStream(dependencies: RouteDependencies, record: RequestRecord, ending: DeferredEnd): StreamEnd {
  return (usage, failure) => {
    record.usage = usage;
    ending.defer(() => finishRequest(dependencies, record, streamOutcomeStatus(failure)));
  };
}

/** How a stream's end reads in the ledger and metrics: 200, 499 (the client left) or the failure's status. */
function streamOutcomeStatus(failure: unknown): number {
  if (failure === undefined) return 200;
  if (isGatewayError(failure)) return failure.status;
  if (isUpstreamLimitError(failure)) return failure.limit === 'body-too-large' ? 502 : 504;
  return 499;
}

/** How the streams of a deployment are watched: the dialect's break event, the first-byte time and the idle timeout. */
function streamWatch<Request>(
  routed: RoutedRequest<Request>,
  dialect: Pick<ClientDialect<Request, unknown, unknown>, 'renderStreamBreak'>,
): TransformBodyOptions {
  const { dependencies, deployment, record } = routed;
  const providerName = deployment.target.providerName;
  return {
    renderSourceError: (error) =>
      textEncoder.encode(
        dialect.renderStreamBreak(upstreamReadFailure(error, providerName, dependencies.redactor, true)),
      ),
    onFirstOutput: () => (record.firstByteAt = dependencies.services.now()),
    idleTimeoutMs: deployment.limits.streamIdleTimeoutMs,
    now: dependencies.services.now,
  };
}

const textEncoder = new TextEncoder();

/**
 * The answer to a stream request must be an event stream, and it is not the client's until its first bytes came (so a
 * stream that fails before them is retried like any failed call; see readerAfterFirstChunk). An upstream that sends JSON or HTML instead (an error
 * object with a 200, a proxy's error page) gets a 502 that carries the upstream's own error message when it had one,
 * before anything is sent to the client.
 */
async function requireEventStream<Request>(
  response: UpstreamResponse,
  routed: RoutedRequest<Request>,
): Promise<ChunkReader> {
  const { dependencies, deployment, record } = routed;
  const contentType = response.contentType ?? '';
  if (!/json|html/i.test(contentType)) {
    const reader = response.bodyReader?.() ?? response.body?.getReader();
    if (reader !== undefined)
      return readerAfterFirstChunk(
        reader,
        deployment.limits.streamIdleTimeoutMs,
        deployment.target.providerName,
        dependencies.redactor,
      );
  }
  const text = await readUpstreamText(response, dependencies, deployment, record);
  // OpenAI's and Anthropic's error objects both carry `error.message`, which this check reads.
  const check = checkOpenAIAnswer(text);
  const upstreamMessage = check.ok ? undefined : check.errorMessage;
  throw invalidUpstreamAnswer(
    deployment.target.providerName,
    `a stream was asked for, but it answered with ${contentType || 'no content type'}` +
      (upstreamMessage === undefined ? '' : `: ${dependencies.redactor.redact(upstreamMessage)}`),
  );
}
