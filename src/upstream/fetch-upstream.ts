import type { UpstreamFetch, UpstreamResponse } from '../services.ts';
import { UpstreamLimitError } from './upstream-limit-error.ts';

/**
 * A platform `Response` as an {@link UpstreamResponse}: `text(maxBytes)` reads the body through its reader, counting
 * bytes and racing the body timeout, and aborts the call (through `abort`) as soon as either bound is crossed.
 */
class FetchUpstreamResponse implements UpstreamResponse {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: Headers;
  readonly #response: Response;
  readonly #abort: (reason: Error) => void;
  readonly #bodyTimeoutMs: number;

  constructor(response: Response, abort: (reason: Error) => void, bodyTimeoutMs: number) {
    this.status = response.status;
    this.ok = response.ok;
    this.headers = response.headers;
    this.#response = response;
    this.#abort = abort;
    this.#bodyTimeoutMs = bodyTimeoutMs;
  }

  get body(): ReadableStream<Uint8Array> | null {
    return this.#response.body;
  }

  get contentType(): string | null {
    return this.headers.get('content-type');
  }

  async text(maxBytes: number): Promise<string> {
    const body = this.#response.body;
    if (body === null) return '';
    const declared = Number(this.#response.headers.get('content-length') ?? Number.NaN);
    if (declared > maxBytes) return this.#refuse(new UpstreamLimitError('body-too-large', maxBytes), body);
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new UpstreamLimitError('body-timeout', this.#bodyTimeoutMs)),
        this.#bodyTimeoutMs,
      );
    });
    const parts: string[] = [];
    let received = 0;
    try {
      for (;;) {
        const { done, value } = await Promise.race([reader.read(), timedOut]);
        if (done) break;
        received += value.byteLength;
        if (received > maxBytes) throw new UpstreamLimitError('body-too-large', maxBytes);
        parts.push(decoder.decode(value, { stream: true }));
      }
    } catch (error) {
      if (error instanceof UpstreamLimitError) {
        this.#abort(error);
        await reader.cancel(error).catch(() => undefined);
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
    parts.push(decoder.decode());
    return parts.join('');
  }

  async #refuse(error: UpstreamLimitError, body: ReadableStream<Uint8Array>): Promise<never> {
    this.#abort(error);
    await body.cancel(error).catch(() => undefined);
    throw error;
  }
}

/**
 * The upstream client for runtimes whose only HTTP client is the platform `fetch` (Workers, Deno, browsers, the
 * library's default): the client's signal and a headers-only timeout combined in one AbortController, the timer
 * cleared as soon as the headers arrive so a long stream is never cut; the body is read within the call's bounds
 * (see `UpstreamRequestInit`).
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
      const response = await fetchFunction(url, {
        method: init.method,
        headers: init.headers,
        body: init.body,
        signal: controller.signal,
      });
      return new FetchUpstreamResponse(response, (reason) => controller.abort(reason), init.bodyTimeoutMs);
    } catch (error) {
      throw timedOut ? new UpstreamLimitError('headers-timeout', init.headersTimeoutMs) : error;
    } finally {
      clearTimeout(timer);
    }
  };
}
