import type { UpstreamFetch } from '../services.ts';

/** A `TimeoutError`, the name {@link UpstreamFetch} clients reject with when the headers timeout passes. */
function timeoutError(milliseconds: number): Error {
  const error = new Error(`No response headers within ${milliseconds} ms.`);
  error.name = 'TimeoutError';
  return error;
}

/**
 * The upstream client for runtimes whose only HTTP client is the platform `fetch` (Workers, Deno, browsers, the
 * library's default): the client's signal and a headers-only timeout combined in one AbortController, the timer
 * cleared as soon as the headers arrive so a long stream is never cut.
 *
 * @example
 * const gateway = createGateway({ ..., services: { upstreamFetch: createFetchUpstream(fetch) } });
 */
export function createFetchUpstream(fetchFunction: typeof fetch = (input, init) => fetch(input, init)): UpstreamFetch {
  return async (url, init) => {
    const controller = new AbortController();
    const forwardAbort = (): void => controller.abort(init.signal.reason);
    if (init.signal.aborted) forwardAbort();
    else init.signal.addEventListener('abort', forwardAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, init.headersTimeoutMs);
    try {
      return await fetchFunction(url, {
        method: init.method,
        headers: init.headers,
        body: init.body,
        signal: controller.signal,
      });
    } catch (error) {
      throw timedOut ? timeoutError(init.headersTimeoutMs) : error;
    } finally {
      clearTimeout(timer);
    }
  };
}
