/**
 * Fixed rate-limit windows aligned to the epoch (a one-minute window starts on a whole UTC minute), and the
 * duration format of OpenAI's `x-ratelimit-reset-*` headers.
 *
 * Fixed windows are cheap to share (one counter per key and window, no timestamps per request) and every process
 * agrees on them without talking. Their cost is the boundary burst: a client that spends its whole quota at the end
 * of one window and again at the start of the next gets up to twice the limit within one window length, never more.
 */

/** The start (epoch ms) of the window of length `windowMs` that holds `now` (epoch ms). */
export function windowStartOf(now: number, windowMs: number): number {
  return now - (((now % windowMs) + windowMs) % windowMs);
}

/** The last duration {@link formatResetDuration} formatted, in whole ms, and its text. */
const lastFormatted = { total: -1, text: '' };

/**
 * A duration in the format OpenAI sends in `x-ratelimit-reset-requests` and `x-ratelimit-reset-tokens` (Go's
 * `time.Duration` text, whole milliseconds): `17ms`, `1s`, `1.5s`, `6m0s`, `1h2m3s`. Negative durations read `0s`.
 */
export function formatResetDuration(milliseconds: number): string {
  const total = Math.max(0, Math.round(milliseconds));
  if (total === 0) return '0s';
  // Every response of a limited key formats one or two of these; requests in the same millisecond share the text.
  if (total === lastFormatted.total) return lastFormatted.text;
  const text = formatWholeMilliseconds(total);
  lastFormatted.total = total;
  lastFormatted.text = text;
  return text;
}

/** {@link formatResetDuration} of a positive whole number of milliseconds. */
function formatWholeMilliseconds(total: number): string {
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const wholeSeconds = Math.floor((total % 60_000) / 1000);
  const secondsText = `${wholeSeconds}${fractionText(total % 1000)}s`;
  if (hours > 0) return `${hours}h${minutes}m${secondsText}`;
  if (minutes > 0) return `${minutes}m${secondsText}`;
  return secondsText;
}

/**
 * Milliseconds (0-999) as the decimal fraction of a second without trailing zeros: 500 -> `.5`, 50 -> `.05`,
 * 5 -> `.005`, 0 -> nothing. Arithmetic rather than a regular expression: it runs on every response of a limited key.
 */
function fractionText(milliseconds: number): string {
  if (milliseconds === 0) return '';
  if (milliseconds % 100 === 0) return `.${milliseconds / 100}`;
  if (milliseconds % 10 === 0) return milliseconds < 100 ? `.0${milliseconds / 10}` : `.${milliseconds / 10}`;
  return milliseconds < 10 ? `.00${milliseconds}` : milliseconds < 100 ? `.0${milliseconds}` : `.${milliseconds}`;
}
