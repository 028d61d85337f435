/** Headers of every streamed (SSE) response the gateway sends. */
export const sseResponseHeaders: Record<string, string> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
};
