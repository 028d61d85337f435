import { Hono } from 'hono';
import { parseTraceParent } from './observability/trace-context.ts';
import { createAdminKeysRoutes } from './admin/admin-keys-route.ts';
import { createAdminUsageRoutes } from './admin/admin-usage-route.ts';
import { createAdminDeploymentsRoutes } from './admin/admin-deployments-route.ts';
import { createGatewayRouter } from './routing/gateway-router.ts';
import { startHealthChecks } from './routing/health-checks.ts';
import type { CircuitBus } from './routing/circuit-bus.ts';
import { createRateLimiter } from './limits/rate-limiter.ts';
import type { KeyAdministration } from './auth/key-administration.ts';
import type { UsageQuery } from './usage/usage-query.ts';
import type { Authenticator } from './auth/authenticator.ts';
import type { ProviderRegistry } from './canonical/provider-translator.ts';
import type { GatewayConfig } from './config/config-schema.ts';
import { GatewayError, renderError, type ErrorDialect } from './errors.ts';
import { anthropicMessagesDialect } from './dialects/anthropic-messages/anthropic-messages-dialect.ts';
import { resolveModelGroups } from './routing/resolve-model-groups.ts';
import type { PriceTable } from './usage/price-model.ts';
import { openAIChatDialect } from './dialects/openai-chat/openai-chat-dialect.ts';
import { openAIEmbeddingsDialect } from './dialects/openai-embeddings/openai-embeddings-dialect.ts';
import { openAICompletionsDialect } from './dialects/openai-completions/openai-completions-dialect.ts';
import { handleModelRequest, modelRoute, type ModelRoute } from './routes/handle-model-request.ts';
import { createDirectModelRoutes, type DirectModelRoutes } from './routes/direct-model-routes.ts';
import { createFailureRenderer } from './routes/gateway-failure.ts';
import { openAIResponsesDialect } from './dialects/openai-responses/openai-responses-dialect.ts';
import { responsesLifecycle } from './routes/responses-conversation.ts';
import { createResponsesRoutes } from './routes/responses-routes.ts';
import { createCountTokensHandler } from './routes/count-tokens-route.ts';
import { chatOperation, embeddingsOperation } from './routes/model-operation.ts';
import type { RouteDependencies } from './routes/gateway-context.ts';
import type { GatewayContext, GatewayEnvironment } from './gateway-environment.ts';
import { createFetchUpstream } from './upstream/fetch-upstream.ts';
import { createHealthRoutes } from './routes/health-routes.ts';
import { createModelHandler, createModelsHandler } from './routes/models-route.ts';
import { finishRequest } from './routes/request-accounting.ts';
import type { GatewayAccounting } from './accounting/gateway-accounting.ts';
import { createRequestRecord } from './routes/request-record.ts';
import { withTimingHeaders } from './routes/timing-headers.ts';
import { createRedactingLogger } from './security/redacting-logger.ts';
import { createSecretRedactor, secretsOfConfig } from './security/secret-redactor.ts';
import { consoleLogger, noMetrics, type GatewayServices } from './services.ts';
import { defaultJsonLimits } from './framing/json-limits.ts';
import { createUsageSanity } from './usage/usage-sanity.ts';
import { defaultResponseRetentionMs, type ResponseStore } from './responses/response-store.ts';

/** What {@link createGateway} is built from. */
export interface GatewayOptions {
  /** A validated config (see parseGatewayConfig). */
  config: GatewayConfig;
  /** The provider translators and presets; the package entry point passes the built-in ones. */
  providers: ProviderRegistry;
  /**
   * Model prices for the usage ledger and budgets: the adapters pass the bundled table (src/usage/price-table.ts; the
   * Worker loads it on demand, outside its start-up bundle). Without it only deployments' own `pricing` costs anything.
   */
  priceTable?: PriceTable;
  /** Who may call: the master-key authenticator, or the virtual-key one. */
  authenticator: Authenticator;
  /** Runtime services; anything omitted gets its Web-standard default. */
  services?: Partial<GatewayServices>;
  /** Rate limits, budgets and the usage ledger; each part optional. */
  accounting?: GatewayAccounting;
  /** The admin API (master key only): `/admin/keys` with `keys`, `/admin/usage` with `usage`. */
  administration?: { keys?: KeyAdministration; usage?: UsageQuery };
  /**
   * Secrets beyond the config's own (which are always redacted) that no client or log line may see: the master key,
   * database and cache passwords.
   */
  secrets?: readonly string[];
  /** The Responses API's stored responses (translated conversations, native response owners); without it nothing is stored. */
  responses?: { store: ResponseStore; retentionMs?: number };
  /**
   * How deployments' circuit changes reach the gateway's other processes (without it each process keeps its own),
   * and whether this runtime can run the config's background health checks (timers outliving requests: Node and
   * Deno yes, Cloudflare Workers no; default no).
   */
  routing?: { circuitBus?: CircuitBus; backgroundHealthChecks?: boolean };
}

const defaultBodyLimitBytes = 4 * 1024 * 1024;

const methodNotAllowedError = (): GatewayError =>
  new GatewayError({
    status: 405,
    type: 'invalid_request_error',
    code: 'method_not_allowed',
    message: 'Method not allowed for this path.',
  });

function methodNotAllowed(): never {
  throw methodNotAllowedError();
}

function anthropicMethodNotAllowed(c: GatewayContext): never {
  c.var.record.errorDialect = 'anthropic';
  throw methodNotAllowedError();
}

/**
 * The envelope of an error for a request no route took (an unknown URL): Anthropic's for requests that look like an
 * Anthropic client's (an `anthropic-version` header, a path under `/v1/messages`), OpenAI's otherwise.
 */
function guessErrorDialect(request: Request): ErrorDialect {
  if (request.headers.has('anthropic-version')) return 'anthropic';
  // `includes`, not `startsWith`: the gateway may be mounted under a prefix (`/llm/v1/messages/...`).
  return new URL(request.url).pathname.includes('/v1/messages') ? 'anthropic' : 'openai';
}

const directRoutesOfApps = new WeakMap<Hono<GatewayEnvironment>, DirectModelRoutes>();

/**
 * The model routes of a gateway made by {@link createGateway}, for a server that serves them without the Hono app
 * (the Node server's direct path: no Request, Response or Web stream per request); undefined for any other app.
 * Everything else, and every model route a server does not take this way, is served by the app's `fetch` as usual.
 *
 * @example
 * const route = gatewayDirectRoutes(app)?.post('/v1/chat/completions');
 */
export function gatewayDirectRoutes(app: Hono<GatewayEnvironment>): DirectModelRoutes | undefined {
  return directRoutesOfApps.get(app);
}

/**
 * Builds the gateway: a Hono app serving the OpenAI-compatible API, health and metrics. It holds no runtime-specific
 * code; serve its `fetch` from any runtime or mount it under a path of another Hono app.
 *
 * @example
 * const gateway = createGateway({
 *   config: parseGatewayConfig(rawConfig, process.env),
 *   providers: builtinProviders,
 *   authenticator: createMasterKeyAuthenticator(process.env.TORII_MASTER_KEY!),
 * });
 * export default { fetch: gateway.fetch };
 */
export function createGateway(options: GatewayOptions): Hono<GatewayEnvironment> {
  const redactor = createSecretRedactor([...secretsOfConfig(options.config), ...(options.secrets ?? [])]);
  const services: GatewayServices = {
    upstreamFetch: options.services?.upstreamFetch ?? createFetchUpstream(),
    metrics: options.services?.metrics ?? noMetrics,
    logger: createRedactingLogger(options.services?.logger ?? consoleLogger, redactor),
    now: options.services?.now ?? (() => performance.now()),
    ...(options.services?.metricsExposition ? { metricsExposition: options.services.metricsExposition } : {}),
    ...(options.services?.isReady ? { isReady: options.services.isReady } : {}),
    ...(options.services?.tokenCounter ? { tokenCounter: options.services.tokenCounter } : {}),
    ...(options.services?.accessLog ? { accessLog: options.services.accessLog } : {}),
    ...(options.services?.traces ? { traces: options.services.traces } : {}),
    ...(options.services?.clockAdvancesDuringCompute === false ? { clockAdvancesDuringCompute: false } : {}),
  };
  const overheadMeasured = services.clockAdvancesDuringCompute !== false;
  const tracing = services.traces !== undefined;
  const modelGroups = resolveModelGroups(options.config, options.providers, options.priceTable);
  const dependencies: RouteDependencies = {
    services,
    authenticator: options.authenticator,
    modelGroups,
    router: createGatewayRouter(modelGroups, services, options.routing?.circuitBus),
    // Deployment capacity shares the keys' limiter (and its store across processes) when accounting has one.
    capacity: options.accounting?.rateLimiter ?? createRateLimiter({ mode: 'local' }),
    bodyLimitBytes: options.config.server?.bodyLimitBytes ?? defaultBodyLimitBytes,
    redactor,
    jsonLimits: {
      maxDepth: options.config.server?.jsonMaxDepth ?? defaultJsonLimits.maxDepth,
      maxElements: options.config.server?.jsonMaxElements ?? defaultJsonLimits.maxElements,
    },
    startedAtSeconds: Math.floor(Date.now() / 1000),
    usageSanity: createUsageSanity({
      maxTokens: options.config.server?.maxUsageTokens,
      logger: services.logger,
      now: services.now,
    }),
    accounting: options.accounting ?? {},
    responseStore: options.responses?.store,
    responseRetentionMs:
      options.responses?.retentionMs ??
      (options.config.server?.responseRetentionDays === undefined
        ? defaultResponseRetentionMs
        : options.config.server.responseRetentionDays * 24 * 60 * 60 * 1000),
  };
  const { metrics, now } = services;
  if ([...modelGroups.values()].some((group) => group.healthCheck !== undefined)) {
    if (options.routing?.backgroundHealthChecks === true) startHealthChecks(modelGroups, dependencies.router, services);
    else
      services.logger.warn('health checks are configured but this runtime runs no background timers; not started', {
        groups: [...modelGroups.values()].filter((group) => group.healthCheck !== undefined).map((group) => group.name),
      });
  }
  const app = new Hono<GatewayEnvironment>();

  app.use('*', async (c, next) => {
    const record = createRequestRecord(c.req.header('x-request-id') ?? null, now(), overheadMeasured);
    if (tracing) record.traceParent = parseTraceParent(c.req.header('traceparent'));
    c.set('record', record);
    const measured = c.req.path.includes('/v1/');
    if (measured) metrics.requestStarted();
    await next();
    if (!record.timingHeadersSent) {
      const headers = c.res.headers;
      for (const [name, value] of Object.entries(withTimingHeaders(record, now(), {}))) headers.set(name, value);
    }
    if (measured && !record.streamEndsRequest) finishRequest(dependencies, record, c.res.status);
  });

  const renderFailure = createFailureRenderer(services.logger, redactor, now);
  app.onError((error, c) => {
    const rendered = renderFailure(error, c.var.record);
    return new Response(rendered.body, { status: rendered.status, headers: rendered.headers });
  });
  const unknownUrl = (c: { req: { raw: Request } }) =>
    renderError(
      new GatewayError({
        status: 404,
        type: 'invalid_request_error',
        code: 'unknown_url',
        message: 'Unknown request URL.',
      }),
      guessErrorDialect(c.req.raw),
    );
  app.notFound(unknownUrl);

  app.route('/', createHealthRoutes(services));
  const modelRoutes: Record<string, ModelRoute> = {
    '/v1/chat/completions': modelRoute(dependencies, openAIChatDialect, chatOperation),
    '/v1/embeddings': modelRoute(dependencies, openAIEmbeddingsDialect, embeddingsOperation),
    '/v1/completions': modelRoute(dependencies, openAICompletionsDialect, chatOperation),
    '/v1/messages': modelRoute(dependencies, anthropicMessagesDialect, chatOperation),
    '/v1/responses': modelRoute(dependencies, openAIResponsesDialect, chatOperation, responsesLifecycle),
  };
  for (const [path, route] of Object.entries(modelRoutes)) app.post(path, handleModelRequest(route));
  directRoutesOfApps.set(app, createDirectModelRoutes(dependencies, modelRoutes, renderFailure));
  app.route('/', createResponsesRoutes(dependencies));
  app.post('/v1/messages/count_tokens', createCountTokensHandler(dependencies));
  app.all('/v1/messages/count_tokens', anthropicMethodNotAllowed);
  for (const path of ['/v1/chat/completions', '/v1/embeddings', '/v1/completions', '/v1/responses'])
    app.all(path, methodNotAllowed);
  app.all('/v1/messages', anthropicMethodNotAllowed);
  app.get('/v1/models', createModelsHandler(dependencies));
  app.get('/v1/models/:model{.+}', createModelHandler(dependencies));
  const adminDependencies = {
    authenticator: options.authenticator,
    modelGroups: dependencies.modelGroups,
    bodyLimitBytes: dependencies.bodyLimitBytes,
    jsonLimits: dependencies.jsonLimits,
    now: () => Date.now(),
  };
  app.route('/admin', createAdminDeploymentsRoutes({ ...adminDependencies, router: dependencies.router }));
  if (options.administration?.keys !== undefined)
    app.route('/admin', createAdminKeysRoutes({ ...adminDependencies, keys: options.administration.keys }));
  if (options.administration?.usage !== undefined)
    app.route('/admin', createAdminUsageRoutes({ ...adminDependencies, usage: options.administration.usage }));
  // Last: every other path. A Hono app mounted with `route('/llm', gateway)` does not run its own notFound, so an
  // unknown path under the mount would get the host's plain-text 404 instead of the client API's JSON error.
  app.all('*', unknownUrl);
  return app;
}
