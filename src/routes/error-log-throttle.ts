import type { GatewayLogger } from '../services.ts';

/** Distinct error codes remembered at once; a hostile upstream cannot grow the table. */
const maxCodes = 256;

/** One line per error code and interval; how many were held back is said in the next line of that code. */
export type ThrottledErrorLog = (
  level: 'warn' | 'error',
  code: string,
  message: string,
  fields: Record<string, unknown>,
) => void;

/**
 * Logs the errors the gateway answers with, at most one line per error code per `intervalMs` (default 1 s): a flood
 * (thousands of forged keys, an upstream that is down) must not become one log line per request, and a line that
 * follows held-back ones says how many (`suppressed`).
 *
 * @example
 * const logError = createThrottledErrorLog(logger, () => performance.now());
 * logError('warn', 'upstream_timeout', 'Upstream openai did not respond', { requestId });
 */
export function createThrottledErrorLog(
  logger: GatewayLogger,
  now: () => number,
  intervalMs = 1_000,
): ThrottledErrorLog {
  const lines = new Map<string, { loggedAt: number; suppressed: number }>();
  return (level, code, message, fields) => {
    const at = now();
    const last = lines.get(code);
    if (last !== undefined && at - last.loggedAt < intervalMs) {
      last.suppressed++;
      return;
    }
    const suppressed = last?.suppressed ?? 0;
    if (last === undefined && lines.size >= maxCodes) lines.clear();
    lines.set(code, { loggedAt: at, suppressed: 0 });
    logger[level](message, { ...fields, code, ...(suppressed > 0 ? { suppressed } : {}) });
  };
}
