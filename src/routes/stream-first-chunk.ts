import { upstreamError } from '../errors.ts';
import type { SecretRedactor } from '../security/secret-redactor.ts';
import type { ChunkReader } from '../services.ts';
import { UpstreamLimitError } from '../upstream/upstream-limit-error.ts';
import { upstreamReadFailure } from './call-upstream.ts';
import { settlesAtOnce } from './settles-at-once.ts';

/**
 * Waits for a stream's first bytes before anything goes to the client, and hands back a reader that yields them
 * first. A stream that breaks, ends or stays silent for `idleTimeoutMs` before its first bytes fails here, as an
 * ordinary (retryable) upstream failure: nothing was sent yet, so the request can still go to another deployment.
 */
export async function readerAfterFirstChunk(
  reader: ChunkReader,
  idleTimeoutMs: number,
  providerName: string,
  redactor: SecretRedactor,
): Promise<ChunkReader> {
  let first: ReadableStreamReadResult<Uint8Array>;
  try {
    first = await withinIdleTimeout(reader.read(), idleTimeoutMs);
  } catch (error) {
    reader.cancel(error).catch(() => {});
    throw upstreamReadFailure(error, providerName, redactor, true);
  }
  if (first.done) {
    throw upstreamError(
      'upstream_stream_interrupted',
      providerName,
      `The upstream ${providerName} stream ended before its first event.`,
      {
        retryable: true,
      },
    );
  }
  let pending: ReadableStreamReadResult<Uint8Array> | undefined = first;
  return {
    read() {
      if (pending === undefined) return reader.read();
      const result = pending;
      pending = undefined;
      return Promise.resolve(result);
    },
    cancel: (reason) => reader.cancel(reason),
  };
}

/**
 * The read's result, or an idle-timeout failure after `idleTimeoutMs`. The timer is set only when the result is not
 * there a microtask later: the first bytes usually came in the same socket read as the response's headers, and a
 * timer set and cleared costs more than the wait (Node creates and drops the timer list of its duration each time
 * when requests come one at a time).
 */
async function withinIdleTimeout<Result>(read: Promise<Result>, idleTimeoutMs: number): Promise<Result> {
  if (await settlesAtOnce(read)) return read;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const silence = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new UpstreamLimitError('idle-timeout', idleTimeoutMs)), idleTimeoutMs);
  });
  try {
    return await Promise.race([read, silence]);
  } finally {
    clearTimeout(timer);
  }
}
