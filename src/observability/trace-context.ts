/** A W3C trace context parent (`traceparent`): the caller's trace, the span that called, and whether it samples. */
export interface TraceParent {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

const traceParentPattern = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * Reads a `traceparent` header (W3C Trace Context, version 00); undefined for anything else, all-zero ids included,
 * so a malformed header starts a new trace rather than failing the request.
 *
 * @example
 * parseTraceParent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'); // { traceId, spanId, sampled: true }
 */
export function parseTraceParent(header: string | null | undefined): TraceParent | undefined {
  if (header === null || header === undefined || header.length !== 55) return undefined;
  const match = traceParentPattern.exec(header.toLowerCase());
  if (match === null) return undefined;
  const [, traceId, spanId, flags] = match as unknown as [string, string, string, string];
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

/** `bytes` random bytes as lowercase hex (trace ids: 16, span ids: 8). */
export function randomHex(bytes: number): string {
  const values = crypto.getRandomValues(new Uint8Array(bytes));
  let hex = '';
  for (const value of values) hex += value.toString(16).padStart(2, '0');
  return hex;
}
