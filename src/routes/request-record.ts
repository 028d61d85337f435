import type { TraceParent } from '../observability/trace-context.ts';
import type { AuthContext } from '../auth/authenticator.ts';
import type { CanonicalUsage } from '../canonical/canonical-usage.ts';
import type { RateLimitReservation } from '../limits/rate-limit-outcome.ts';
import type { ClientDialectId } from '../canonical/provider-translator.ts';
import type { ErrorDialect } from '../errors.ts';
import type { ResolvedDeployment } from '../routing/resolved-deployment.ts';
import { timeOrderedRequestId } from './request-id.ts';

/** What the gateway knows about one request while serving it; filled step by step along the request path. */
export interface RequestRecord {
  /**
   * Made by the gateway, unique per request: the ledger's idempotency key (a retried write of the same request's event
   * carries the same id) and what the gateway's own logs name. Never taken from the client.
   */
  requestId: string;
  /** The client's `x-request-id` when it sent a sane one: kept beside the gateway's id for correlation, echoed back. */
  clientRequestId: string | null;
  /** Monotonic start time (ms). */
  startedAt: number;
  /** `chat`, `embeddings`, `models`, ... ; undefined for routes that are not measured (health, metrics). */
  operation: string | undefined;
  /** The client API the request came in (`openai-chat`, `anthropic-messages` ...), for the ledger and metrics. */
  clientApi: ClientDialectId | undefined;
  /**
   * The envelope every error of this request is rendered in, set by the route as soon as it knows its client API
   * (before authentication), so auth, limit and routing errors reach an Anthropic client in Anthropic's shape.
   */
  errorDialect: ErrorDialect;
  modelGroup: string | undefined;
  provider: string | undefined;
  stream: boolean;
  /** Time spent waiting for the upstream (headers, and whole body for non-streamed responses), in ms. */
  upstreamMs: number;
  /** Whether an upstream call was made at all. */
  calledUpstream: boolean;
  usage: CanonicalUsage | undefined;
  /**
   * Set by eventStreamResponse when the response is an event stream: the stream's end (its transformer's `onEnd`), not
   * the response, ends the request, so the gateway's middleware leaves it alone. Any other response is ended by the
   * middleware, including a stream request that failed before its stream was built.
   */
  streamEndsRequest: boolean;
  /** Set by finishRequest, which does its work once per request whoever calls it. */
  ended: boolean;
  /** Whether the handler already put the timing headers on its response (see withTimingHeaders). */
  timingHeadersSent: boolean;
  /** Wall-clock start (epoch ms), for the usage ledger. */
  startedAtWall: number;
  /** The authenticated caller; undefined until authentication succeeded. */
  auth: AuthContext | undefined;
  /** The deployment serving the request (the last one tried), once routed. */
  deployment: ResolvedDeployment | undefined;
  /** The group of that deployment: the requested one, or a fallback group. */
  routedGroup: string | undefined;
  /** Upstream attempts made for the request (retries and fallbacks included). */
  attempts: number;
  /** Prompt tokens estimated from the request body (TPM reservation, and the ledger when the upstream gives none). */
  estimatedInputTokens: number;
  /** The rate-limit reservation to settle when the request finishes. */
  reservation: RateLimitReservation | undefined;
  /** The serving deployment's `rpm`/`tpm` reservation, settled when the request finishes. */
  capacityReservation: RateLimitReservation | undefined;
  /** Extra headers for the successful response (`x-ratelimit-*`). */
  responseHeaders: Record<string, string> | undefined;
  /** Monotonic time (ms) the first streamed bytes went to the client. */
  firstByteAt: number | undefined;
  /** The caller's W3C trace context, read only when spans are exported (GatewayServices.traces). */
  traceParent: TraceParent | undefined;
  /**
   * False where the clock does not advance while the gateway computes (workerd): the gateway's own time (overhead)
   * cannot be measured there, so the timing headers, metrics and access line leave it out rather than report 0.
   */
  overheadMeasured: boolean;
}

const requestIdPattern = /^[\w.:-]{1,128}$/;

/**
 * A fresh record with a gateway-made request id (a time-ordered UUIDv7, see timeOrderedRequestId); a client-sent
 * `x-request-id` is kept beside it when it is a sane token (anything else is dropped, never reflected).
 * `overheadMeasured` is false on runtimes whose clock stands still during compute (see GatewayServices.clock).
 */
export function createRequestRecord(
  clientRequestId: string | null,
  startedAt: number,
  overheadMeasured = true,
): RequestRecord {
  const startedAtWall = Date.now();
  return {
    requestId: timeOrderedRequestId(startedAtWall),
    clientRequestId: clientRequestId !== null && requestIdPattern.test(clientRequestId) ? clientRequestId : null,
    startedAt,
    operation: undefined,
    clientApi: undefined,
    errorDialect: 'openai',
    modelGroup: undefined,
    provider: undefined,
    stream: false,
    upstreamMs: 0,
    calledUpstream: false,
    usage: undefined,
    streamEndsRequest: false,
    ended: false,
    timingHeadersSent: false,
    startedAtWall,
    auth: undefined,
    deployment: undefined,
    routedGroup: undefined,
    attempts: 0,
    estimatedInputTokens: 0,
    reservation: undefined,
    capacityReservation: undefined,
    responseHeaders: undefined,
    firstByteAt: undefined,
    traceParent: undefined,
    overheadMeasured,
  };
}
