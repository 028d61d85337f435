import type { LogLineWriter } from '../../src/observability/json-logger.ts';

/** A log line writer that batches its writes, and can be flushed before the process exits. */
export interface BufferedLineWriter {
  write: LogLineWriter;
  /** Writes whatever is buffered now (synchronously for files and pipes, as Node writes stdio to them). */
  flush(): void;
}

/**
 * The most bytes one write carries to a pipe (or a terminal, a socket): its atomic write size, so lines of processes
 * sharing it (cluster workers) never interleave.
 */
export const pipeWriteBytes = 4096;

/**
 * The most bytes one write carries to a regular file: a write to a file is not split between processes sharing its
 * open file (Linux serialises them on the file position), so lines never interleave at any size; larger writes are
 * fewer system calls.
 */
export const fileWriteBytes = 65_536;

/** A stdio stream's part that the writer uses: it takes UTF-8 bytes (and a line too long for a batch as text). */
interface LineSink {
  write(chunk: Uint8Array | string): unknown;
}

/** Lines waiting for one stream: encoded into `bytes` as they come, `used` bytes so far. */
interface PendingLines {
  bytes: Buffer;
  used: number;
}

/**
 * Buffers log lines: `debug`/`info` go to `stdout` every `flushEveryMs` (50 ms) or as soon as 4 KiB are waiting, so
 * under load a write carries about ten access lines instead of one system call (and one trip through Node's stream
 * machinery) each (Node writes stdio to files and pipes synchronously, so every `console.log` is one); `warn`/`error`
 * go to `stderr` at the end of the event-loop turn, as soon as an operator wants them. Measured (lean chat at max
 * rps, one worker, access line at `info` against `warn`, interleaved pairs): a write per turn cost ~9% of throughput,
 * the 50 ms batch ~5%. A write to a pipe never exceeds 4 KiB (its atomic size): cluster workers share their
 * primary's stdout, and a larger write could be split by another worker's line; to a regular file (`> torii.log`)
 * writes go up to 64 KiB (`maxWriteBytes`, see {@link fileWriteBytes}). A line longer than the bound goes out alone.
 * On process `exit` the rest is written; only a process killed with SIGKILL loses what it buffered in its last 50 ms.
 *
 * Lines are encoded into a buffer of the bound's size as they come, and the buffer is handed to the stream as it is
 * (a fresh one takes its place, so a stream that writes later never sees it change). Appending each line to a string
 * instead cost its concatenation, the flattening of the whole batch and its encoding again in the stream.
 *
 * Why not pino: what it would bring here is this batching (sonic-boom) and a fast serialiser, and the access line is
 * already one `JSON.stringify` of a flat object; its line shape (numeric `level`, `msg`) would differ from the other
 * runtimes' unless reconfigured; and a dependency on the Node path only buys nothing the 60 lines here do not.
 *
 * @example
 * const writer = createBufferedLineWriter();
 * const logger = createJsonLogger({ level: 'info', write: writer.write });
 */
export function createBufferedLineWriter(
  sinks: { stdout: LineSink; stderr: LineSink } = { stdout: process.stdout, stderr: process.stderr },
  flushEveryMs = 50,
  maxWriteBytes: { stdout: number; stderr: number } = { stdout: pipeWriteBytes, stderr: pipeWriteBytes },
): BufferedLineWriter {
  const pending: Record<'stdout' | 'stderr', PendingLines> = {
    stdout: { bytes: Buffer.allocUnsafe(maxWriteBytes.stdout), used: 0 },
    stderr: { bytes: Buffer.allocUnsafe(maxWriteBytes.stderr), used: 0 },
  };
  let scheduled = false;
  const flushOne = (name: 'stdout' | 'stderr'): void => {
    const lines = pending[name];
    if (lines.used === 0) return;
    const chunk = lines.bytes.subarray(0, lines.used);
    lines.bytes = Buffer.allocUnsafe(maxWriteBytes[name]);
    lines.used = 0;
    sinks[name].write(chunk);
  };
  let stderrScheduled = false;
  const flush = (): void => {
    scheduled = false;
    flushOne('stdout');
    flushOne('stderr');
  };
  const flushErrors = (): void => {
    stderrScheduled = false;
    flushOne('stderr');
  };
  const write: LogLineWriter = (line, level) => {
    const name = level === 'warn' || level === 'error' ? 'stderr' : 'stdout';
    const lines = pending[name];
    const bound = maxWriteBytes[name];
    // At most 3 UTF-8 bytes per UTF-16 unit, and the newline: the exact size is needed only near the bound.
    if (lines.used + line.length * 3 + 1 > bound) {
      const size = Buffer.byteLength(line) + 1;
      if (lines.used + size > bound) flushOne(name);
      if (size > bound) {
        sinks[name].write(`${line}\n`);
        return;
      }
    }
    lines.used += lines.bytes.write(line, lines.used);
    lines.bytes[lines.used++] = 10;
    if (name === 'stderr') {
      // Warnings and errors are rare and wanted at once: written at the end of this event-loop turn.
      if (!stderrScheduled) {
        stderrScheduled = true;
        setImmediate(flushErrors);
      }
    } else if (!scheduled) {
      scheduled = true;
      // Unref'd: buffered lines never keep a process alive (the exit path flushes them).
      setTimeout(flush, flushEveryMs).unref();
    }
  };
  return { write, flush };
}
