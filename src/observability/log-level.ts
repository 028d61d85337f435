/**
 * How much the gateway logs: `debug` < `info` < `warn` < `error`; `silent` writes nothing. A logger at a level writes
 * the lines of that level and above. The default is `info`, which includes the access line (one per request).
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** The levels a line can have (every level but `silent`). */
export type LogLineLevel = Exclude<LogLevel, 'silent'>;

/** The levels in increasing order of severity, as `TORII_LOG_LEVEL` accepts them. */
export const logLevels: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

/** The level a gateway logs at when none is set. */
export const defaultLogLevel: LogLevel = 'info';

const severity: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** Whether a logger at `threshold` writes a line of `level`. */
export function logLevelEnabled(threshold: LogLevel, level: LogLineLevel): boolean {
  return severity[level] >= severity[threshold];
}

/**
 * Reads a log level setting: undefined or empty gives the default (`info`); a known level (any case, surrounding
 * spaces ignored) gives that level; anything else gives the problem to report, naming the accepted values.
 *
 * @example
 * const level = parseLogLevel(process.env.TORII_LOG_LEVEL); // { level: 'info' } or { problem: '...' }
 */
export function parseLogLevel(value: string | undefined): { level: LogLevel } | { problem: string } {
  if (value === undefined || value.trim() === '') return { level: defaultLogLevel };
  const normalised = value.trim().toLowerCase();
  const found = logLevels.find((level) => level === normalised);
  if (found !== undefined) return { level: found };
  return { problem: `must be one of ${logLevels.join(', ')}, got "${value}"` };
}
