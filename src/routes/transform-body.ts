import type { CancellableTransformer } from './stream-response.ts';

/**
 * Runs a response body through a Transformer with one pull-based ReadableStream instead of `pipeThrough`: each pull
 * reads the upstream, transforms, and hands the output on, with no intermediate queues or pipe machinery (`pipeTo`
 * costs several promise hops per chunk on Node). Backpressure comes for free: nothing is read until the client
 * pulls. Cancelling the result (the client went away) calls the transformer's `cancel` and cancels the upstream read.
 * A failing upstream read ends the stream with `renderSourceError`'s event, when given.
 */
export function transformBody(
  source: ReadableStream<Uint8Array>,
  transformer: CancellableTransformer<Uint8Array, Uint8Array>,
  renderSourceError?: (error: unknown) => Uint8Array,
  onFirstOutput?: () => void,
): ReadableStream<Uint8Array> {
  let firstOutput = onFirstOutput;
  const reader = source.getReader();
  const pending: Uint8Array[] = [];
  let terminated = false;
  let sourceDone = false;
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

  return new ReadableStream<Uint8Array>({
    async pull(output) {
      while (pending.length === 0 && !terminated) {
        let result: ReadableStreamReadResult<Uint8Array>;
        try {
          result = await reader.read();
        } catch (error) {
          // The upstream connection broke mid-stream: end the client's stream with an error event in its dialect
          // (when the caller can render one) instead of a torn connection, and settle the transformer.
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
      for (const chunk of pending) output.enqueue(chunk);
      pending.length = 0;
      if (terminated) {
        output.close();
        if (!sourceDone) await reader.cancel().catch(() => undefined);
      }
    },
    async cancel(reason) {
      transformer.cancel?.(reason);
      await reader.cancel(reason).catch(() => undefined);
    },
  });
}
