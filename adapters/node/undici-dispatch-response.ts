import type { Dispatcher } from 'undici';
import type { UpstreamResponse } from '../../src/services.ts';

type RawHeaders = Record<string, string | string[] | undefined>;

const textDecoder = new TextDecoder();

/**
 * An upstream response fed by undici's dispatch handler callbacks. Chunks are buffered until the gateway asks for
 * the whole text (non-streamed responses: one decode, no stream objects at all) or for `body` (streams: a Web
 * ReadableStream fed straight from the socket callbacks, paused and resumed with its reader's demand).
 */
export class UndiciDispatchResponse implements UpstreamResponse {
  readonly status: number;
  readonly ok: boolean;
  #rawHeaders: RawHeaders;
  #headers: Headers | undefined;
  #controller: Dispatcher.DispatchController;
  #chunks: Uint8Array[] = [];
  #ended = false;
  #failure: Error | undefined;
  #stream: ReadableStream<Uint8Array> | undefined;
  #streamController: ReadableStreamDefaultController<Uint8Array> | undefined;
  #waiting: { resolve: (text: string) => void; reject: (error: Error) => void } | undefined;

  constructor(status: number, rawHeaders: RawHeaders, controller: Dispatcher.DispatchController) {
    this.status = status;
    this.ok = status >= 200 && status < 300;
    this.#rawHeaders = rawHeaders;
    this.#controller = controller;
  }

  get headers(): Headers {
    if (this.#headers === undefined) {
      const headers = new Headers();
      for (const [name, value] of Object.entries(this.#rawHeaders)) {
        if (Array.isArray(value)) for (const item of value) headers.append(name, item);
        else if (value !== undefined) headers.set(name, value);
      }
      this.#headers = headers;
    }
    return this.#headers;
  }

  get body(): ReadableStream<Uint8Array> {
    this.#stream ??= new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#streamController = controller;
        for (const chunk of this.#chunks) controller.enqueue(chunk);
        this.#chunks = [];
        if (this.#failure !== undefined) controller.error(this.#failure);
        else if (this.#ended) controller.close();
      },
      pull: () => {
        if (this.#controller.paused) this.#controller.resume();
      },
      cancel: (reason) => {
        if (!this.#ended)
          this.#controller.abort(reason instanceof Error ? reason : new Error('The client cancelled the stream.'));
      },
    });
    return this.#stream;
  }

  text(): Promise<string> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (this.#ended) return Promise.resolve(this.#decode());
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }

  /** A body chunk arrived. */
  push(chunk: Uint8Array): void {
    const stream = this.#streamController;
    if (stream === undefined) {
      this.#chunks.push(chunk);
      return;
    }
    stream.enqueue(chunk);
    if ((stream.desiredSize ?? 1) <= 0) this.#controller.pause();
  }

  /** The body is complete. */
  end(): void {
    this.#ended = true;
    this.#streamController?.close();
    if (this.#waiting !== undefined) this.#waiting.resolve(this.#decode());
  }

  /** The connection failed mid-body. */
  fail(error: Error): void {
    this.#failure = error;
    if (this.#streamController !== undefined) this.#streamController.error(error);
    this.#waiting?.reject(error);
  }

  #decode(): string {
    const chunks = this.#chunks;
    this.#chunks = [];
    if (chunks.length === 1) return textDecoder.decode(chunks[0]);
    let length = 0;
    for (const chunk of chunks) length += chunk.byteLength;
    const joined = new Uint8Array(length);
    let offset = 0;
    for (const chunk of chunks) {
      joined.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return textDecoder.decode(joined);
  }
}
