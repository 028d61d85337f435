/** Which of an upstream call's bounds was crossed. */
export type UpstreamLimit = 'headers-timeout' | 'body-timeout' | 'idle-timeout' | 'body-too-large';

const upstreamLimitMarker = '__toriiUpstreamLimit';

const descriptions: Record<UpstreamLimit, (value: number) => string> = {
  'headers-timeout': (value) => `sent no response headers within ${value} ms`,
  'body-timeout': (value) => `did not finish sending its response body within ${value} ms`,
  'idle-timeout': (value) => `sent nothing for ${value} ms in the middle of its stream`,
  'body-too-large': (value) => `sent a response body larger than ${value} bytes`,
};

/**
 * What an {@link UpstreamFetch} client rejects with (or errors a body stream with) when an upstream call crosses one
 * of its bounds. Timeouts are named `TimeoutError`, as `AbortSignal.timeout` names them, so a client written against
 * the older contract that only knew the headers timeout still reads right. Recognised by a marker property, not
 * `instanceof`, because a Worker bundle or a library consumer can hold two copies of this module.
 */
export class UpstreamLimitError extends Error {
  readonly [upstreamLimitMarker] = true;
  /** The bound that was crossed. */
  readonly limit: UpstreamLimit;
  /** Its configured value: milliseconds for timeouts, bytes for sizes. */
  readonly value: number;

  constructor(limit: UpstreamLimit, value: number) {
    super(`The upstream ${descriptions[limit](value)}.`);
    this.name = limit === 'body-too-large' ? 'UpstreamBodyTooLargeError' : 'TimeoutError';
    this.limit = limit;
    this.value = value;
  }
}

/** True for an {@link UpstreamLimitError} from any copy of this module. */
export function isUpstreamLimitError(value: unknown): value is UpstreamLimitError {
  return (
    typeof value === 'object' && value !== null && (value as Record<string, unknown>)[upstreamLimitMarker] === true
  );
}

/** Shorthand for the UpstreamFetch reader's phrase of a crossed bound, e.g. for a log line. */
export function describeUpstreamLimit(limit: UpstreamLimit, value: number): string {
  return descriptions[limit](value);
}
