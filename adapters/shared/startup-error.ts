import { ConfigError } from '../../src/config/config-error.ts';

/**
 * A setting the server cannot start with. It names the setting (an environment variable such as `PORT`, or a config
 * field such as `modelGroups.x.deployments[0].options`) and the reason, and prints as one line (see
 * {@link formatStartupFailure}): an operator reads what to fix, not a stack trace.
 */
export class StartupError extends Error {
  /** The environment variable or config field to fix. */
  readonly setting: string;
  /** What is wrong with it, in a sentence without the setting's name. */
  readonly reason: string;
  /** Marker: recognised without `instanceof` (bundles may hold two copies of this class). */
  readonly isStartupError = true;

  constructor(setting: string, reason: string, options: { cause?: unknown } = {}) {
    super(`${setting}: ${reason}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'StartupError';
    this.setting = setting;
    this.reason = reason;
  }
}

/** Whether `error` is a {@link StartupError} (by its marker). */
export function isStartupError(error: unknown): error is StartupError {
  return typeof error === 'object' && error !== null && (error as { isStartupError?: unknown }).isStartupError === true;
}

/** A Node system error's code (`EADDRINUSE`, `ENOENT` ...), if it has one. */
export function systemErrorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

const systemErrorReasons: Record<string, string> = {
  ENOENT: 'does not exist',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'a part of the path is a file, not a directory',
  EISDIR: 'is a directory',
  EROFS: 'is on a read-only file system',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
};

/** A short reason for a file-system error (`permission denied`, `no space left on the device` ...). */
export function fileSystemReason(error: unknown): string {
  const code = systemErrorCode(error);
  const reason = code === undefined ? undefined : systemErrorReasons[code];
  if (reason !== undefined) return `${reason} (${code})`;
  return error instanceof Error ? error.message : String(error);
}

/** What {@link formatStartupFailure} prints, as an object. */
export interface StartupFailureLine {
  level: 'error';
  message: string;
  /** The setting to fix, when known. */
  setting?: string;
  reason?: string;
  /** Every problem of an invalid config. */
  problems?: readonly string[];
  /** Only for an unexpected error (a bug): its stack, to report it. */
  stack?: string;
}

/**
 * Describes why the server could not start, as one JSON log line naming the setting and the reason. A
 * {@link StartupError} or a config error never prints a stack trace; anything else is unexpected (a bug) and keeps
 * its stack inside the JSON line.
 *
 * @example
 * main().catch((error) => {
 *   console.error(formatStartupFailure(error)); // {"time":"...","level":"error","message":"cannot start: PORT: ...",...}
 *   process.exit(1);
 * });
 */
export function formatStartupFailure(error: unknown, now: Date = new Date()): string {
  // `time` first, as in every other log line (src/observability/json-logger.ts).
  return JSON.stringify({ time: now.toISOString(), ...describeStartupFailure(error) });
}

/** The object behind {@link formatStartupFailure}. */
export function describeStartupFailure(error: unknown): StartupFailureLine {
  if (isStartupError(error)) {
    return {
      level: 'error',
      message: `cannot start: ${error.setting}: ${error.reason}`,
      setting: error.setting,
      reason: error.reason,
    };
  }
  if (error instanceof ConfigError || (error instanceof Error && error.name === 'ConfigError')) {
    const problems = (error as ConfigError).problems ?? [error.message];
    const first = problems[0] ?? '';
    const separator = first.indexOf(': ');
    return {
      level: 'error',
      message: `cannot start: invalid config: ${problems.join('; ')}`,
      ...(separator > 0 ? { setting: first.slice(0, separator) } : {}),
      problems,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    level: 'error',
    message: `cannot start: ${message}`,
    ...(error instanceof Error && error.stack !== undefined ? { stack: error.stack } : {}),
  };
}
