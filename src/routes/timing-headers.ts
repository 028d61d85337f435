import type { RequestRecord } from './request-record.ts';

/**
 * What `Server-Timing` says of the gateway's own time where it cannot be measured: workerd stops its clocks while code
 * runs (a Spectre mitigation; they move only when I/O completes), so "now minus start minus upstream" would read 0
 * for any amount of work. The upstream's time spans I/O and stays measured.
 */
const unmeasuredGatewayTiming = 'gateway;desc="not measurable: the runtime clock stands still during compute"';

/**
 * Adds the observability headers to a response's headers: `x-request-id` (the client's own id when it sent one,
 * else the gateway's), `x-torii-request-id` (always the gateway's, the ledger's key), `x-torii-overhead-ms` (time inside the
 * gateway so far, upstream time excluded) and `Server-Timing`; once a deployment was tried, `x-torii-model-group`,
 * `x-torii-deployment` (the last tried: the one that served a success) and `x-torii-attempts`. Handlers call it while building their response, so
 * the headers go out as a plain object (no Headers instance to build and mutate afterwards); the gateway's middleware
 * adds them to any response that did not get them this way (errors, health).
 *
 * Where the runtime's clock stands still during compute (`record.overheadMeasured` false: workerd), there is no
 * `x-torii-overhead-ms` and `Server-Timing`'s `gateway` entry has a description instead of a duration: an honest
 * "unknown", not a 0 that reads like a measurement.
 */
export function withTimingHeaders(
  record: RequestRecord,
  now: number,
  headers: Record<string, string>,
): Record<string, string> {
  headers['x-request-id'] = record.clientRequestId ?? record.requestId;
  headers['x-torii-request-id'] = record.requestId;
  let gatewayTiming = unmeasuredGatewayTiming;
  if (record.overheadMeasured) {
    const overhead = Math.max(0, now - record.startedAt - record.upstreamMs).toFixed(3);
    headers['x-torii-overhead-ms'] = overhead;
    gatewayTiming = `gateway;dur=${overhead}`;
  }
  headers['server-timing'] = record.calledUpstream
    ? `${gatewayTiming}, upstream;dur=${record.upstreamMs.toFixed(3)}`
    : gatewayTiming;
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
