import type { ChunkReader } from '../services.ts';
import { UpstreamLimitError } from '../upstream/upstream-limit-error.ts';
import { concatenateChunks } from '../framing/concatenate-chunks.ts';
import type { CancellableTransformer } from '../framing/stream-end.ts';
import { settlesAtOnce } from './settles-at-once.ts';

/** How {@link transformBody} watches and ends a stream. */
export interface TransformBodyOptions {
  /**
   * The event that ends the client's stream when the upstream read fails (a broken connection, or the idle
   * timeout's {@link UpstreamLimitError}); without it the stream just ends.
   */
  renderSourceError?: (error: unknown) => Uint8Array;
  /** Called once, when the first bytes go to the client. */
  onFirstOutput?: () => void;
  /**
   * The longest the upstream may stay silent while the client waits for more, ms. Time the gateway spends waiting
   * for a slow client does not count: the upstream is not being read then.
   */
  idleTimeoutMs?: number;
  /** A monotonic clock in ms (default `performance.now`). */
  now?: () => number;
  /** Where the transformer's end work waits until its step is delivered (see {@link StreamPump.delivered}). */
  ending?: DeferredEnd;
}

/**
 * End work a stream reports while a pump step is being made (the request's bookkeeping when the transformer sees the
 * final event), held until that step's bytes are with the client: run by {@link StreamPump.delivered} right after the
 * consumer hands the step on, in the same task, so the next request a client sends after reading the end still finds
 * it done, but the bytes do not wait for it.
 */
export interface DeferredEnd {
  /** Holds `task` until {@link DeferredEnd.run} (a later task replaces an earlier one that has not run). */
  defer(task: () => void): void;
  /** Runs the held task, if any, once. */
  run(): void;
}

/**
 * A {@link DeferredEnd}.
 *
 * @example
 * const ending = createDeferredEnd();
 * const pump = createStreamPump(reader, createRelay({ onEnd: (usage) => ending.defer(() => account(usage)) }), { ending });
 */
export function createDeferredEnd(): DeferredEnd {
  let held: (() => void) | undefined;
  return {
    defer(task) {
      held = task;
    },
    run() {
      const task = held;
      held = undefined;
      task?.();
    },
  };
}

/** How long the rest of an upstream body is read after the transformer ended the client's stream, at most, ms. */
const releaseGraceMs = 2_000;
/** How many bytes of it are read, at most, before the upstream is cancelled instead. */
const releaseMaxBytes = 64 * 1024;

/**
 * The client's stream is over (the transformer saw the dialect's final event, or gave up on the upstream) but the
 * upstream has not closed its body. What is left is read and dropped in the background, so an upstream that ends
 * right after its final event (the usual case: its chunked terminator follows in the same or the next packet) keeps
 * its connection for the next request; one that sends more than {@link releaseMaxBytes} or stays open past `graceMs`
 * is cancelled, which closes the connection.
 */
function releaseUpstream(reader: ChunkReader, graceMs: number): void {
  const cancel = (): void => void reader.cancel().catch(() => undefined);
  // Armed at the first read that waits: the rest (often just the end) is usually there already.
  let timer: ReturnType<typeof setTimeout> | undefined;
  let received = 0;
  const drain = async (): Promise<void> => {
    for (;;) {
      const read = reader.read();
      if (timer === undefined && !(await settlesAtOnce(read))) timer = setTimeout(cancel, graceMs);
      const { done, value } = await read;
      if (done) return;
      received += value.byteLength;
      if (received > releaseMaxBytes) return cancel();
    }
  };
  drain()
    .catch(() => undefined)
    .finally(() => clearTimeout(timer));
}

/** One step of a {@link StreamPump}: the bytes for the client (none when a step produced nothing), and whether the stream is over. */
export interface StreamPumpStep {
  value: Uint8Array | undefined;
  done: boolean;
}

/**
 * A response body produced on demand, one upstream read at a time: the stream as the client gets it, without a
 * ReadableStream around it. {@link transformBody} wraps one in a ReadableStream for fetch handlers; the Node server's
 * direct path writes its steps to the socket itself.
 */
export interface StreamPump {
  /**
   * Reads the upstream until the transformer has output or the stream is over. An upstream failure never rejects:
   * it ends the stream with `renderSourceError`'s event. It rejects only when the transformer throws. Not to be
   * called again after a step that is `done`, nor while a pull is pending.
   */
  pull(): Promise<StreamPumpStep>;
  /**
   * The consumer has handed the last step's bytes to the client (or given up on it): runs the end work the step
   * deferred (see {@link DeferredEnd}). Call it after every step, in the same task as the write.
   */
  delivered(): void;
  /**
   * The client went away: the transformer sees the reason (a failure), the end work runs, and the upstream read is
   * cancelled.
   */
  cancel(reason?: unknown): Promise<void>;
}

/**
 * Runs an upstream body through a Transformer, pulled by the client: each pull reads the upstream, transforms, and
 * hands the output on, with no intermediate queues or pipe machinery (`pipeTo` costs several promise hops per chunk
 * on Node). Backpressure comes for free: nothing is read until the client pulls. Cancelling (the client went away)
 * calls the transformer's `cancel` and cancels the upstream read. A failing upstream read, or an upstream silent for
 * longer than `idleTimeoutMs`, cancels the upstream and ends the stream with `renderSourceError`'s event. A
 * transformer that terminates (the dialect's final event came, or the upstream's stream is beyond use) ends the
 * client's stream at once; the upstream's remainder is released in the background ({@link releaseUpstream}), and
 * nothing is ever sent after the transformer's last output.
 *
 * One timer per stream watches for silence, armed at the first read that has to wait (none for a stream whose bytes
 * all came with its first read) and re-armed only when it fires, not per chunk.
 *
 * @example
 * const pump = createStreamPump(upstream.body.getReader(), transformer, { idleTimeoutMs: 60_000 });
 * for (let step = await pump.pull(); ; step = await pump.pull()) {
 *   if (step.value !== undefined) write(step.value);
 *   if (step.done) break;
 * }
 */
export function createStreamPump(
  reader: ChunkReader,
  transformer: CancellableTransformer<Uint8Array, Uint8Array>,
  options: TransformBodyOptions = {},
): StreamPump {
  const { renderSourceError, idleTimeoutMs } = options;
  const now = options.now ?? (() => performance.now());
  let firstOutput = options.onFirstOutput;
  const pending: Uint8Array[] = [];
  let terminated = false;
  let finished = false;
  let sourceDone = false;
  /** Monotonic time the pending upstream read started; -1 while none is pending. */
  let waitingSince = -1;
  let idleTimer: ReturnType<typeof setTimeout> | undefined;
  let idleFailure: UpstreamLimitError | undefined;

  const checkIdle = (): void => {
    idleTimer = undefined;
    if (waitingSince < 0 || idleTimeoutMs === undefined) return;
    const silent = now() - waitingSince;
    // Timers may fire a little early against a cached clock: a millisecond of slack, not a second round.
    if (silent + 1 >= idleTimeoutMs) {
      idleFailure = new UpstreamLimitError('idle-timeout', idleTimeoutMs);
      void reader.cancel(idleFailure).catch(() => undefined);
    } else idleTimer = setTimeout(checkIdle, idleTimeoutMs - silent);
  };
  const stopWatching = (): void => {
    clearTimeout(idleTimer);
    idleTimer = undefined;
  };

  const controller = {
    desiredSize: 1,
    enqueue(chunk: Uint8Array) {
      pending.push(chunk);
    },
    terminate() {
      terminated = true;
    },
    error(reason: unknown) {
      throw reason;
    },
  } as unknown as TransformStreamDefaultController<Uint8Array>;

  return {
    async pull() {
      if (finished) return { value: undefined, done: true };
      while (pending.length === 0 && !terminated) {
        let result: ReadableStreamReadResult<Uint8Array>;
        try {
          const read = reader.read();
          if (idleTimeoutMs !== undefined) {
            waitingSince = now();
            // Armed for the first read that waits, not for one whose bytes are there already (see settlesAtOnce).
            if (idleTimer === undefined && !(await settlesAtOnce(read)))
              idleTimer = setTimeout(checkIdle, idleTimeoutMs);
          }
          result = await read;
          waitingSince = -1;
          // A read cut short by the idle timeout resolves as done; it is a failure.
          if (idleFailure !== undefined) throw idleFailure;
        } catch (error) {
          waitingSince = -1;
          // The upstream connection broke mid-stream or went silent: end the client's stream with an error event in
          // its dialect (when the caller can render one) instead of a torn connection, and settle the transformer.
          transformer.cancel?.(error);
          if (renderSourceError !== undefined) pending.push(renderSourceError(error));
          sourceDone = true;
          terminated = true;
          break;
        }
        const { done, value } = result;
        if (done) {
          sourceDone = true;
          await transformer.flush?.(controller);
          terminated = true;
        } else {
          await transformer.transform?.(value, controller);
        }
      }
      if (firstOutput !== undefined && pending.length > 0) {
        firstOutput();
        firstOutput = undefined;
      }
      // What one upstream read produced goes out as ONE chunk: the server writes each chunk with its own write call,
      // and a read of a fast upstream carries many events (the adapters hand over a socket read's frames at once).
      const value = pending.length > 0 ? concatenateChunks(pending) : undefined;
      pending.length = 0;
      if (terminated) {
        finished = true;
        stopWatching();
        if (!sourceDone) releaseUpstream(reader, Math.min(idleTimeoutMs ?? releaseGraceMs, releaseGraceMs));
      }
      return { value, done: terminated };
    },
    delivered() {
      options.ending?.run();
    },
    async cancel(reason) {
      stopWatching();
      if (finished) return options.ending?.run();
      finished = true;
      // Only the consumer cancels: the client went away. Runtimes may cancel without a reason; the transformer must
      // still see a failure, or the request would be accounted as a complete answer.
      transformer.cancel?.(reason ?? new Error('The client closed the stream.'));
      options.ending?.run();
      await reader.cancel(reason).catch(() => undefined);
    },
  };
}

/**
 * {@link createStreamPump} as a ReadableStream, for fetch handlers: each pull of the client's stream is one pump step.
 *
 * @example
 * return new Response(transformBody(upstream.body, transformer, { idleTimeoutMs: 60_000 }));
 */
export function transformBody(
  source: ReadableStream<Uint8Array>,
  transformer: CancellableTransformer<Uint8Array, Uint8Array>,
  options: TransformBodyOptions = {},
): ReadableStream<Uint8Array> {
  return pumpedStream(createStreamPump(source.getReader(), transformer, options));
}

/** A {@link StreamPump} as a ReadableStream. */
export function pumpedStream(pump: StreamPump): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(output) {
      try {
        const { value, done } = await pump.pull();
        if (value !== undefined) output.enqueue(value);
        if (done) output.close();
      } finally {
        pump.delivered();
      }
    },
    cancel: (reason) => pump.cancel(reason),
  });
}
