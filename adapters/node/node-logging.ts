import { createAccessLog, type AccessLog } from '../../src/observability/access-log.ts';
import { createJsonLogger, type LeveledLogger } from '../../src/observability/json-logger.ts';
import { readLogLevel } from '../shared/log-level-setting.ts';
import { fstatSync } from 'node:fs';
import { createBufferedLineWriter, fileWriteBytes, pipeWriteBytes } from './buffered-line-writer.ts';

/** The write bound for a standard stream: larger to a regular file, a pipe's atomic size otherwise. */
function writeBytesOf(descriptor: number): number {
  try {
    return fstatSync(descriptor).isFile() ? fileWriteBytes : pipeWriteBytes;
  } catch {
    return pipeWriteBytes;
  }
}

/** A Node process's logging: the logger, the access log (undefined below `info`), and a flush for exit paths. */
export interface NodeLogging {
  logger: LeveledLogger;
  accessLog: AccessLog | undefined;
  /** Writes what is buffered now (call before `process.exit`; the `exit` event flushes too). */
  flush(): void;
}

/**
 * The logging of one Node process at `TORII_LOG_LEVEL` (throws a StartupError naming it when invalid): JSON lines
 * through one buffered writer (buffered-line-writer.ts) shared by the logger and the access log, flushed on `exit`.
 *
 * @example
 * const { logger, accessLog } = openNodeLogging(process.env);
 */
export function openNodeLogging(environment: Record<string, string | undefined>): NodeLogging {
  const level = readLogLevel(environment);
  const writer = createBufferedLineWriter(undefined, undefined, { stdout: writeBytesOf(1), stderr: writeBytesOf(2) });
  process.on('exit', writer.flush);
  return {
    logger: createJsonLogger({ level, write: writer.write }),
    accessLog: createAccessLog({ level, write: writer.write }),
    flush: writer.flush,
  };
}
