import * as z from 'zod/mini';
import '../validation/zod-issues.ts';

/** How a failed attempt is tried again (per group under `routing`, per group, or per deployment over its group's). */
export const retryConfigSchema = z.strictObject({
  /** Attempts after the first within the group (default 2); another healthy deployment is tried first. */
  retries: z.optional(z.int().check(z.gte(0), z.lte(10))),
  /** Backoff before a deployment is tried again, ms (default 100), doubled each time, with jitter. */
  backoffMs: z.optional(z.int().check(z.gte(0), z.lte(60_000))),
  /** The longest backoff, ms (default 2000). */
  maxBackoffMs: z.optional(z.int().check(z.gte(0), z.lte(300_000))),
  /** The longest upstream `retry-after` waited for, ms (default 5000); a longer one moves on without waiting. */
  maxRetryAfterMs: z.optional(z.int().check(z.gte(0), z.lte(300_000))),
});

/** When a deployment is taken out of rotation (its circuit breaker), per group under `routing` or per group. */
export const cooldownConfigSchema = z.strictObject({
  /** Failures within `windowMs` that open the circuit (default 5). */
  failures: z.optional(z.int().check(z.positive())),
  /** The failure window, ms (default 60000). */
  windowMs: z.optional(z.int().check(z.gte(1000), z.lte(3_600_000))),
  /** A failure ratio that opens the circuit once `minimumRequests` were seen in the window (default 0.5). */
  failureRatio: z.optional(z.number().check(z.gt(0), z.lte(1))),
  /** Requests in the window before the ratio counts (default 10). */
  minimumRequests: z.optional(z.int().check(z.positive())),
  /** How long an opened circuit stays open, ms (default 10000); doubled each time a probe fails, to `maxCooldownMs`. */
  cooldownMs: z.optional(z.int().check(z.gte(100), z.lte(3_600_000))),
  /** The longest cooldown, ms (default 300000). */
  maxCooldownMs: z.optional(z.int().check(z.gte(100), z.lte(86_400_000))),
  /** Requests let through at once to probe a deployment whose cooldown is over (default 1). */
  probes: z.optional(z.int().check(z.positive(), z.lte(100))),
});

/**
 * Optional background health checks of a group's deployments (off by default): a cheap request (the model list) every
 * `intervalMs`; a failure counts against the deployment's circuit, a success closes a cooling one early. They run
 * where the runtime has background timers (Node, Deno), not on Cloudflare Workers.
 */
export const healthCheckConfigSchema = z.strictObject({
  /** Time between two checks of one deployment, ms. */
  intervalMs: z.int().check(z.gte(100), z.lte(86_400_000)),
  /** How long a check may take, ms (default 5000). */
  timeoutMs: z.optional(z.int().check(z.positive(), z.lte(600_000))),
});

/** How a group picks among its healthy deployments. */
export const routingStrategySchema = z.enum(['weighted', 'least-busy', 'latency', 'cost', 'priority']);

/** Group names tried in order when a group cannot serve a request. */
const fallbackListSchema = z.array(z.string().check(z.minLength(1)));

/** One deployment of a model group: a provider, the upstream's model name, and how to reach it. */
export const deploymentConfigSchema = z.strictObject({
  /** A translator id (`openai-compatible`, `anthropic`) or a preset (`openai`, `groq`, `mistral` ...). */
  provider: z.string().check(z.minLength(1)),
  /** The upstream's own model name. */
  model: z.string().check(z.minLength(1)),
  /** Base URL of the upstream API, e.g. `https://api.openai.com/v1`. Optional when the preset has one. */
  baseURL: z.optional(z.url({ protocol: /^https?$/ })),
  /** The upstream API key; usually an `${ENV_VAR}` reference. */
  apiKey: z.optional(z.string().check(z.minLength(1))),
  /** Relative weight when a group has several deployments (default 1). */
  weight: z.optional(z.number().check(z.positive())),
  /** Extra headers sent to the upstream with every request. */
  headers: z.optional(z.record(z.string(), z.string())),
  /** Timeouts of calls to this deployment, ms, over the `server` ones. */
  timeouts: z.optional(
    z.strictObject({
      /** Until the response headers arrive (default `server.upstreamTimeoutMs`). */
      headersMs: z.optional(z.int().check(z.positive())),
      /** Reading a whole non-stream answer after its headers (default `server.upstreamBodyTimeoutMs`). */
      bodyMs: z.optional(z.int().check(z.positive())),
      /** The longest silence inside a streamed answer (default `server.upstreamStreamIdleTimeoutMs`). */
      streamIdleMs: z.optional(z.int().check(z.positive())),
      /** Opening the connection, TCP and TLS (Node; default 10000). Elsewhere the headers timeout bounds it. */
      connectMs: z.optional(z.int().check(z.positive())),
      /** The whole call, from sending to the last byte of the answer or stream (default: none). */
      totalMs: z.optional(z.int().check(z.positive())),
    }),
  ),
  /** Retries after a failure of this deployment, over its group's. */
  retry: z.optional(retryConfigSchema),
  /** The tier under the `priority` strategy: lower first (default 0). */
  priority: z.optional(z.int().check(z.gte(0))),
  /** The provider account's requests per minute for this deployment; at it, the deployment is skipped. */
  rpm: z.optional(z.int().check(z.positive())),
  /** The provider account's tokens per minute for this deployment (estimated prompt plus max output). */
  tpm: z.optional(z.int().check(z.positive())),
  /**
   * The client dialects this deployment serves natively and gets passed through (`openai-chat`, `openai-embeddings`,
   * `anthropic-messages`, `anthropic-count-tokens`); default: its preset's. `[]` translates everything.
   */
  nativeDialects: z.optional(z.array(z.string())),
  /** Provider-specific options (e.g. `anthropicVersion`, `defaultMaxTokens`). */
  options: z.optional(z.record(z.string(), z.unknown())),
  /**
   * Prices of this deployment in US dollars per million tokens, over the bundled price table (negotiated rates, a
   * model the table does not know, a self-hosted model that costs 0).
   */
  pricing: z.optional(
    z.strictObject({
      input: z.optional(z.number().check(z.gte(0))),
      output: z.optional(z.number().check(z.gte(0))),
      cachedInput: z.optional(z.number().check(z.gte(0))),
      cacheWriteInput: z.optional(z.number().check(z.gte(0))),
      reasoning: z.optional(z.number().check(z.gte(0))),
    }),
  ),
});

/** A model group: the name clients put in `model`, served by one or more deployments. */
export const modelGroupConfigSchema = z.strictObject({
  deployments: z.array(deploymentConfigSchema).check(z.minLength(1)),
  description: z.optional(z.string()),
  /** How the group picks a deployment (default `weighted`, or `routing.strategy`). */
  strategy: z.optional(routingStrategySchema),
  /** Retries within the group, over `routing.retry`. */
  retry: z.optional(retryConfigSchema),
  /** The deployments' circuit breaker, over `routing.cooldown`. */
  cooldown: z.optional(cooldownConfigSchema),
  /** Background health checks of its deployments (default `routing.healthCheck`, else none). */
  healthCheck: z.optional(healthCheckConfigSchema),
  /** Groups tried in order when this one is exhausted (default `routing.defaultFallbacks`). */
  fallbacks: z.optional(fallbackListSchema),
  /** Groups tried when a deployment says the prompt does not fit its context window. */
  contextWindowFallbacks: z.optional(fallbackListSchema),
  /** Groups tried when a deployment refuses the request under its content policy. */
  contentPolicyFallbacks: z.optional(fallbackListSchema),
});

/** Routing defaults for every group. */
export const routingConfigSchema = z.strictObject({
  strategy: z.optional(routingStrategySchema),
  retry: z.optional(retryConfigSchema),
  cooldown: z.optional(cooldownConfigSchema),
  healthCheck: z.optional(healthCheckConfigSchema),
  /** Fallbacks of every group that has none of its own (a group is never its own fallback). */
  defaultFallbacks: z.optional(fallbackListSchema),
});

/** Server limits and timeouts. */
export const serverConfigSchema = z.strictObject({
  /** Largest accepted request body in bytes (default 4 MiB). */
  bodyLimitBytes: z.optional(z.int().check(z.positive())),
  /** Time allowed for an upstream to send response headers, in ms (default 600000). */
  upstreamTimeoutMs: z.optional(z.int().check(z.positive())),
  /** Time allowed for reading a whole non-stream upstream answer after its headers, in ms (default 300000). */
  upstreamBodyTimeoutMs: z.optional(z.int().check(z.positive())),
  /** The longest silence allowed inside a streamed upstream answer, in ms (default 300000). */
  upstreamStreamIdleTimeoutMs: z.optional(z.int().check(z.positive())),
  /** The largest non-stream upstream answer the gateway reads, in bytes (default 64 MiB); past it: 502. */
  upstreamMaxBodyBytes: z.optional(z.int().check(z.positive())),
  /** The largest upstream error body read for its message, in bytes (default 1 MiB). */
  upstreamMaxErrorBodyBytes: z.optional(z.int().check(z.positive())),
  /**
   * Deepest nesting of objects and arrays accepted in a JSON request body (default 128). At most 1000: a few thousand
   * levels overflow the stack of `JSON.stringify` and of validation.
   */
  jsonMaxDepth: z.optional(z.int().check(z.positive(), z.lte(1000))),
  /** Most items accepted in one array, or members in one object, of a JSON request body (default 100000). */
  jsonMaxElements: z.optional(z.int().check(z.positive())),
  /**
   * Most tokens an upstream may report for one request in any one usage field (default 10000000); larger counts are
   * clamped to it before cost, limits, budgets and the ledger, and logged.
   */
  maxUsageTokens: z.optional(z.int().check(z.positive())),
  /** How long the Responses API's stored responses are kept, days (default 30, as OpenAI keeps them). */
  responseRetentionDays: z.optional(z.number().check(z.positive(), z.lte(3650))),
});

/** The whole gateway config, as written in torii.config.yaml / .json (after `${ENV}` substitution). */
export const gatewayConfigSchema = z.strictObject({
  modelGroups: z.record(z.string().check(z.minLength(1)), modelGroupConfigSchema),
  routing: z.optional(routingConfigSchema),
  server: z.optional(serverConfigSchema),
});

/** A validated gateway config. */
export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;
/** A validated deployment entry. */
export type DeploymentConfig = z.infer<typeof deploymentConfigSchema>;
/** A validated retry policy entry. */
export type RetryConfig = z.infer<typeof retryConfigSchema>;
/** A validated cooldown entry. */
export type CooldownConfig = z.infer<typeof cooldownConfigSchema>;
/** A routing strategy's name. */
export type RoutingStrategyName = z.infer<typeof routingStrategySchema>;
/** A validated model group entry. */
export type ModelGroupConfig = z.infer<typeof modelGroupConfigSchema>;
