import type { CanonicalUsage } from '../canonical/canonical-usage.ts';
import { checkOpenAIAnswer } from '../dialects/openai-chat/openai-answer-check.ts';
import { GatewayError, openAIErrorBody, upstreamError } from '../errors.ts';
import { findJsonLimitViolation, type JsonLimits } from '../framing/json-limits.ts';
import { parseJson } from '../framing/parse-json.ts';
import type { SecretRedactor } from '../security/secret-redactor.ts';
import type { RouteDependencies } from './gateway-context.ts';
import type { RequestRecord } from './request-record.ts';
import { sseResponseHeaders } from './stream-response.ts';
import { withTimingHeaders } from './timing-headers.ts';
import { pumpedStream, type StreamPump } from './transform-body.ts';

/** A successful JSON response carrying the request's timing headers ({@link jsonReply} as a Response). */
export function jsonResponse(
  dependencies: Pick<RouteDependencies, 'services'>,
  record: RequestRecord,
  body: string,
): Response {
  return replyToResponse(jsonReply(dependencies, record, body));
}

/**
 * A model route's answer before it becomes a Response (fetch handlers, {@link replyToResponse}) or goes straight to a
 * socket (the Node server's direct path): status, headers as a plain object, and a JSON text or a stream's pump.
 */
export interface ModelReply {
  status: number;
  headers: Record<string, string>;
  body: string | StreamPump;
  /**
   * The request's end bookkeeping for a JSON or error reply on the direct path (see direct-model-routes.ts): to run
   * right after the body is handed to the socket, in the same task, or when the client is gone. A stream's end is
   * its pump's (see `StreamPump.delivered`).
   */
  afterSend?: () => void;
}

/** A successful JSON reply carrying the request's timing headers. */
export function jsonReply(
  dependencies: Pick<RouteDependencies, 'services'>,
  record: RequestRecord,
  body: string,
): ModelReply {
  return {
    status: 200,
    headers: withTimingHeaders(record, dependencies.services.now(), { 'content-type': 'application/json' }),
    body,
  };
}

/**
 * A successful Server-Sent Events reply carrying the request's timing headers. From here on the stream's end ends the
 * request (see `RequestRecord.streamEndsRequest`).
 */
export function eventStreamReply(
  dependencies: Pick<RouteDependencies, 'services'>,
  record: RequestRecord,
  pump: StreamPump,
): ModelReply {
  record.streamEndsRequest = true;
  return {
    status: 200,
    headers: withTimingHeaders(record, dependencies.services.now(), { ...sseResponseHeaders }),
    body: pump,
  };
}

/** A {@link ModelReply} as a fetch Response. */
export function replyToResponse(reply: ModelReply): Response {
  const body = typeof reply.body === 'string' ? reply.body : pumpedStream(reply.body);
  return new Response(body, { status: reply.status, headers: reply.headers });
}

/** The 502 for an upstream whose successful answer cannot be used; `reason` completes "its answer ...". */
export function invalidUpstreamAnswer(provider: string, reason: string): GatewayError {
  return upstreamError(
    'upstream_invalid_response',
    provider,
    `Upstream ${provider} sent an answer the gateway cannot use: ${reason}.`,
    { retryable: true },
  );
}

/**
 * Checks a same-dialect (OpenAI) answer before its bytes are relayed unchanged (see checkOpenAIAnswer) and returns its
 * usage; anything that is not a complete, successful OpenAI answer is a 502, with the upstream's own error message
 * (secrets redacted) when it sent one.
 */
export function checkedOpenAIAnswer(
  text: string,
  provider: string,
  redactor: SecretRedactor,
): CanonicalUsage | undefined {
  const check = checkOpenAIAnswer(text);
  if (check.ok) return check.usage;
  const upstreamMessage = check.errorMessage === undefined ? '' : ` (${redactor.redact(check.errorMessage)})`;
  throw invalidUpstreamAnswer(provider, `${check.reason}${upstreamMessage}`);
}

/**
 * Parses an upstream answer that is about to be translated, held to the same nesting and size bounds as client
 * bodies: translation walks and re-serialises it (a tool call's `input` becomes `arguments` text), and a hostile
 * upstream nesting 100,000 levels deep would overflow the stack there. Anything out of bounds, or not JSON, is a 502.
 */
export function parseUpstreamAnswer(text: string, provider: string, limits: JsonLimits): unknown {
  const violation = findJsonLimitViolation(text, limits);
  if (violation !== undefined) {
    const where = violation.param === null ? 'the document' : `'${violation.param}'`;
    throw invalidUpstreamAnswer(
      provider,
      violation.kind === 'depth'
        ? `its JSON nests deeper than ${violation.limit} levels at ${where}`
        : `its JSON has more than ${violation.limit} items in one ${violation.container} at ${where}`,
    );
  }
  const parsed = parseJson(text);
  if (!parsed.ok) throw invalidUpstreamAnswer(provider, `it is not JSON (${parsed.error})`);
  return parsed.value;
}

const textEncoder = new TextEncoder();

/** The OpenAI stream event that ends a stream with an error: `data: {"error":{...}}`. */
export function openAIStreamBreakEvent(error: GatewayError): Uint8Array {
  return textEncoder.encode(`data: ${JSON.stringify(openAIErrorBody(error))}\n\n`);
}
