import type { RequestRecord } from './request-record.ts';

/**
 * Adds the observability headers to a response's headers: `x-request-id` (the client's own id when it sent one,
 * else the gateway's), `x-torii-request-id` (always the gateway's, the ledger's key), `x-torii-overhead-ms` (time inside the
 * gateway so far, upstream time excluded) and `Server-Timing`; once a deployment was tried, `x-torii-model-group`,
 * `x-torii-deployment` (the last tried: the one that served a success) and `x-torii-attempts`. Handlers call it while building their response, so
 * the headers go out as a plain object (no Headers instance to build and mutate afterwards); the gateway's middleware
 * adds them to any response that did not get them this way (errors, health).
 */
export function withTimingHeaders(
  record: RequestRecord,
  now: number,
  headers: Record<string, string>,
): Record<string, string> {
  const overhead = Math.max(0, now - record.startedAt - record.upstreamMs).toFixed(3);
  headers['x-request-id'] = record.clientRequestId ?? record.requestId;
  headers['x-torii-request-id'] = record.requestId;
  headers['x-torii-overhead-ms'] = overhead;
  headers['server-timing'] = record.calledUpstream
    ? `gateway;dur=${overhead}, upstream;dur=${record.upstreamMs.toFixed(3)}`
    : `gateway;dur=${overhead}`;
  // Anthropic's SDK reads the request id from `request-id` (its `_request_id`).
  if (record.errorDialect === 'anthropic') headers['request-id'] = record.requestId;
  if (record.attempts > 0) {
    headers['x-torii-model-group'] = record.routedGroup ?? '';
    headers['x-torii-deployment'] = record.deployment?.id ?? '';
    headers['x-torii-attempts'] = String(record.attempts);
  }
  record.timingHeadersSent = true;
  if (record.responseHeaders !== undefined) Object.assign(headers, record.responseHeaders);
  return headers;
}
