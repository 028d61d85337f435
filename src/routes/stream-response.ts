/** Headers of every streamed (SSE) response the gateway sends. */
export const sseResponseHeaders: Record<string, string> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
};

/**
 * Calls `onEnd` exactly once, whether a stream finished, failed or was cancelled by the client. Returned as a
 * function so transformers can call it from `flush` and `cancel` alike.
 */
export function once(onEnd: () => void): () => void {
  let called = false;
  return () => {
    if (called) return;
    called = true;
    onEnd();
  };
}

/**
 * A Transformer with the `cancel` hook of the current Streams standard (called when the reader cancels, i.e. the
 * client went away). Node, Deno and workerd implement it; TypeScript's DOM library does not declare it yet.
 */
export type CancellableTransformer<Input, Output> = Transformer<Input, Output> & { cancel?: (reason: unknown) => void };
