import type { CanonicalUsage } from '../canonical/canonical-usage.ts';

/**
 * What a stream transformer reports when its stream is over: the usage it saw, and why it ended early when it did
 * (the GatewayError it sent as its final event, the upstream read failure, or the client's cancel reason).
 */
export type StreamEnd = (usage: CanonicalUsage | undefined, failure?: unknown) => void;

/**
 * Calls `onEnd` exactly once, whether a stream finished, failed or was cancelled by the client. Returned as a
 * function so transformers can call it from `flush` and `cancel` alike.
 */
export function once<Arguments extends unknown[]>(
  onEnd: (...values: Arguments) => void,
): (...values: Arguments) => void {
  let called = false;
  return (...values) => {
    if (called) return;
    called = true;
    onEnd(...values);
  };
}

/**
 * A Transformer with the `cancel` hook of the current Streams standard (called when the reader cancels, i.e. the
 * client went away). Node, Deno and workerd implement it; TypeScript's DOM library does not declare it yet.
 */
export type CancellableTransformer<Input, Output> = Transformer<Input, Output> & { cancel?: (reason: unknown) => void };
