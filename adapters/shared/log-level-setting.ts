import { parseLogLevel, type LogLevel } from '../../src/observability/log-level.ts';
import { StartupError } from './startup-error.ts';

/** The environment variable of the log level. */
export const logLevelVariable = 'TORII_LOG_LEVEL';

/**
 * `TORII_LOG_LEVEL`: `debug`, `info` (the default, with one access line per request), `warn`, `error` or `silent`;
 * anything else throws a StartupError naming the variable.
 *
 * @example
 * const level = readLogLevel(process.env); // 'info' when unset
 */
export function readLogLevel(environment: Record<string, unknown>): LogLevel {
  const value = environment[logLevelVariable];
  if (value !== undefined && typeof value !== 'string')
    throw new StartupError(logLevelVariable, 'must be a string such as "info"');
  const parsed = parseLogLevel(value);
  if ('problem' in parsed) throw new StartupError(logLevelVariable, parsed.problem);
  return parsed.level;
}
