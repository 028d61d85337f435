import type { TraceParent } from './trace-context.ts';

/**
 * The record of one finished request: what the access line prints, what the metrics count, and what a trace span
 * will carry, built once when the request ends (a stream: when it ends) so all of them agree on the request id, the
 * tokens and the status. Readers must treat it as read-only.
 *
 * Times: `startedAtWall` is epoch ms (a span's start); durations are ms on the gateway's monotonic clock. `overheadMs`
 * is undefined where the runtime's clock does not advance during compute (workerd; see GatewayServices.clock).
 */
export interface RequestObservation {
  /** The gateway's own id (the ledger's key, `x-torii-request-id`). */
  requestId: string;
  /** The client's `x-request-id`, when it sent a sane one. */
  clientRequestId: string | null;
  /** Wall-clock start, epoch ms. */
  startedAtWall: number;
  /** `chat`, `embeddings`, `models`, `count_tokens`, or `other` for routes without one. */
  operation: string;
  /** The client API the request came in (`openai-chat`, `anthropic-messages` ...); undefined before it was known. */
  clientApi: string | undefined;
  stream: boolean;
  /** `master`, or the virtual key's id; undefined when authentication failed or was not reached. */
  keyId: string | undefined;
  /** The virtual key's visible prefix (`sk-torii-AbC123`), never the key; undefined for the master key. */
  keyPrefix: string | undefined;
  /** The model group asked for; undefined when the request failed before routing. */
  modelGroup: string | undefined;
  /** The group of the deployment that served it (the requested one, or a fallback). */
  servedModelGroup: string | undefined;
  /** The config's provider name of the deployment used. */
  provider: string | undefined;
  /** The deployment used last (`<group>/<index>`). */
  deployment: string | undefined;
  /** The model name sent upstream. */
  upstreamModel: string | undefined;
  /** Upstream attempts made (retries and fallbacks included). */
  attempts: number;
  /** The HTTP status the client got; for streams 200, 499 when the client left, or the status of the break. */
  status: number;
  /** Whole request time as the gateway saw it (streams: until the last byte), ms. */
  durationMs: number;
  /** Time spent waiting for and reading the upstream, ms; undefined when no upstream call was made. */
  upstreamMs: number | undefined;
  /** Time spent inside the gateway (durationMs minus upstreamMs), ms; undefined where it cannot be measured. */
  overheadMs: number | undefined;
  /** Streams: from the request's start to the first output sent to the client, ms. */
  timeToFirstTokenMs: number | undefined;
  /** Prompt tokens, cached ones included (see CanonicalUsage). */
  inputTokens: number;
  /** Generated tokens, reasoning ones included. */
  outputTokens: number;
  /** Prompt tokens read from the provider's cache (part of inputTokens). */
  cachedInputTokens: number;
  /** Output tokens spent on reasoning (part of outputTokens). */
  reasoningTokens: number;
  /** Where the token counts come from: the provider, the provider's clamped by the sanity check, an estimate, none. */
  usageSource: 'provider' | 'provider-adjusted' | 'estimate' | 'none';
  /** What the usage cost at the deployment's price, US dollars (0 when unpriced). */
  costUsd: number;
  /** The caller's W3C trace context when spans are exported and it sent one (the span's parent). */
  traceParent: TraceParent | undefined;
}
