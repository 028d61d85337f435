import type { GatewayLogger } from './gateway-logger.ts';
import { defaultLogLevel, logLevelEnabled, type LogLevel, type LogLineLevel } from './log-level.ts';

/**
 * Where finished log lines go: one JSON object per call, without its newline, and the line's level (so a writer can
 * send `warn` and `error` to stderr). A writer must not block the request path for long: the Node adapter's buffers
 * lines and writes them once per event-loop turn (adapters/node/buffered-line-writer.ts); elsewhere the console is it.
 */
export type LogLineWriter = (line: string, level: LogLineLevel) => void;

/**
 * Writes through the console: `debug` and `info` with `console.log`, `warn` with `console.warn`, `error` with
 * `console.error`. Web-standard, so it serves every runtime (on Deno and workerd it is what their log collection reads).
 */
export const consoleLineWriter: LogLineWriter = (line, level) => {
  if (level === 'error') console.error(line);
  else if (level === 'warn') console.warn(line);
  else console.log(line);
};

/** A {@link GatewayLogger} that also writes `debug` lines. */
export interface LeveledLogger extends GatewayLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  /** The level it was made with: lines below it are dropped before anything is built. */
  readonly level: LogLevel;
}

/** What {@link createJsonLogger} is made from. */
export interface JsonLoggerOptions {
  /** Lines below this level are dropped (default `info`; `silent` drops all). */
  level?: LogLevel;
  /** Where lines go (default {@link consoleLineWriter}). */
  write?: LogLineWriter;
  /** The wall clock, epoch ms (default `Date.now`); tests pass a fixed one. */
  clock?: () => number;
}

let cachedTime = Number.NaN;
let cachedIsoTime = '';
/** The first millisecond of the second {@link secondPrefix} spells (`2025-01-01T00:00:01.`), and that prefix. */
let secondStart = Number.NaN;
let secondPrefix = '';

/**
 * `time` (epoch ms) as ISO-8601, remembering the last one and the last second's `YYYY-MM-DDTHH:MM:SS.`: under load many
 * lines share a millisecond, nearly all share a second, and formatting a date costs about as much as the rest of an
 * access line. Integral times within 0000-9999 take the fast path; any other goes through `Date` each time.
 */
export function isoTime(time: number): string {
  if (time === cachedTime) return cachedIsoTime;
  cachedTime = time;
  const millisecond = time - secondStart;
  if (millisecond >= 0 && millisecond < 1000 && Number.isInteger(millisecond)) {
    cachedIsoTime = `${secondPrefix}${millisecond < 10 ? '00' : millisecond < 100 ? '0' : ''}${millisecond}Z`;
    return cachedIsoTime;
  }
  cachedIsoTime = new Date(time).toISOString();
  // A plain `YYYY-MM-DDTHH:MM:SS.mmmZ` (no extended year): remember its second.
  if (cachedIsoTime.length === 24 && Number.isInteger(time)) {
    secondStart = time - (((time % 1000) + 1000) % 1000);
    secondPrefix = cachedIsoTime.slice(0, 20);
  }
  return cachedIsoTime;
}

/**
 * The one shape of a log line, on every runtime: `{"time":"<ISO-8601>","level":"info","message":"...", ...fields}`.
 * `fields` never replace `time`, `level` or `message`. Values JSON cannot hold (a cycle, a BigInt) turn the fields
 * into their `String` form rather than losing the line.
 *
 * @example
 * jsonLogLine(Date.now(), 'warn', 'usage ledger writes are failing', { failures: 3 });
 */
export function jsonLogLine(
  time: number,
  level: LogLineLevel,
  message: string,
  fields: Record<string, unknown> | undefined,
): string {
  const head = { time: isoTime(time), level, message };
  if (fields === undefined) return JSON.stringify(head);
  try {
    return JSON.stringify({ ...head, ...fields, ...head });
  } catch {
    return JSON.stringify({ ...head, fields: String(fields) });
  }
}

/**
 * A logger writing one JSON line per call (see {@link jsonLogLine}), dropping lines below its level.
 *
 * @example
 * const logger = createJsonLogger({ level: 'warn' });
 * logger.info('not written');
 * logger.warn('written', { attempt: 2 }); // {"time":"2025-01-01T00:00:00.000Z","level":"warn","message":"written","attempt":2}
 */
export function createJsonLogger(options: JsonLoggerOptions = {}): LeveledLogger {
  const threshold = options.level ?? defaultLogLevel;
  const write = options.write ?? consoleLineWriter;
  const clock = options.clock ?? Date.now;
  const method = (level: LogLineLevel) =>
    logLevelEnabled(threshold, level)
      ? (message: string, fields?: Record<string, unknown>) =>
          write(jsonLogLine(clock(), level, message, fields), level)
      : () => {};
  return {
    level: threshold,
    debug: method('debug'),
    info: method('info'),
    warn: method('warn'),
    error: method('error'),
  };
}
