import * as z from 'zod/mini';
import '../validation/zod-issues.ts';

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
    }),
  ),
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
  server: z.optional(serverConfigSchema),
});

/** A validated gateway config. */
export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;
/** A validated deployment entry. */
export type DeploymentConfig = z.infer<typeof deploymentConfigSchema>;
/** A validated model group entry. */
export type ModelGroupConfig = z.infer<typeof modelGroupConfigSchema>;
