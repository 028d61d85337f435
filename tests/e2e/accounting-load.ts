import type OpenAI from 'openai';
import { sleep } from './accounting-harness.ts';

/** One request of a load run, as the client saw it. */
export interface LoadRequest {
  /** The `x-request-id` the client sent (the gateway echoes it and keeps it in the ledger row's `client_request_id`). */
  requestId: string;
  stream: boolean;
  /** performance.now() when it was sent and when it finished (fully read, or failed). */
  sentAt: number;
  finishedAt: number;
  /** True for a 2xx answer read to the end (a stream included: every chunk, no error). */
  succeeded: boolean;
  error?: string;
}

/** What a load run is made with. */
export interface LoadOptions {
  client: OpenAI;
  /** Prefix of every request id of the run (ids are `<prefix>-<n>`). */
  idPrefix: string;
  /** Requests in flight at once. */
  concurrency: number;
  /** Stop after this many requests (default: until `stop()`). */
  total?: number;
  /** Pause of each loop between its requests, ms (default 0). */
  pauseMs?: number;
  /** Every n-th request streams (default 4). */
  streamEvery?: number;
  /** The model group of plain requests (default `gpt-text`). */
  model?: string;
  /** The model group of streamed requests (default `model`). */
  streamModel?: string;
}

/** A load run in progress. */
export interface LoadRun {
  /** Every request sent so far (finished or not: a request is added when it finishes). */
  requests: LoadRequest[];
  /** Requests finished so far that succeeded. */
  succeeded(): number;
  /** Stops sending new requests; resolves when the ones in flight have finished. */
  stop(): Promise<void>;
  /** Resolves when `total` requests have finished (or after `stop()`). */
  done: Promise<void>;
}

/** One request with its own id, read to the end; throws when anything fails, an id mismatch included. */
async function send(options: LoadOptions, requestId: string, stream: boolean): Promise<void> {
  const messages = [{ role: 'user' as const, content: 'hello' }];
  const headers = { 'x-request-id': requestId };
  const model = options.model ?? 'gpt-text';
  if (stream) {
    const { data, response } = await options.client.chat.completions
      .create({ model: options.streamModel ?? model, messages, stream: true }, { headers })
      .withResponse();
    if (response.headers.get('x-request-id') !== requestId) throw new Error('x-request-id not echoed');
    let chunks = 0;
    for await (const chunk of data) chunks += chunk.choices.length;
    if (chunks === 0) throw new Error('empty stream');
    return;
  }
  const { data, response } = await options.client.chat.completions
    .create({ model, messages }, { headers })
    .withResponse();
  if (response.headers.get('x-request-id') !== requestId) throw new Error('x-request-id not echoed');
  if (data.choices.length === 0) throw new Error('no choices');
}

/**
 * Sends chat completions through the OpenAI SDK from `concurrency` loops, each request with its own `x-request-id`,
 * and records what the client saw of each.
 */
export function startLoad(options: LoadOptions): LoadRun {
  const requests: LoadRequest[] = [];
  let next = 0;
  let stopped = false;
  const streamEvery = options.streamEvery ?? 4;
  const loop = async (): Promise<void> => {
    while (!stopped && (options.total === undefined || next < options.total)) {
      const index = next++;
      const stream = streamEvery > 0 && index % streamEvery === streamEvery - 1;
      const requestId = `${options.idPrefix}-${index}`;
      const sentAt = performance.now();
      try {
        await send(options, requestId, stream);
        requests.push({ requestId, stream, sentAt, finishedAt: performance.now(), succeeded: true });
      } catch (error) {
        requests.push({
          requestId,
          stream,
          sentAt,
          finishedAt: performance.now(),
          succeeded: false,
          error: String((error as Error).message ?? error),
        });
      }
      if (options.pauseMs) await sleep(options.pauseMs);
    }
  };
  const done = Promise.all(Array.from({ length: options.concurrency }, loop)).then(() => undefined);
  return {
    requests,
    done,
    succeeded: () => requests.filter((request) => request.succeeded).length,
    async stop() {
      stopped = true;
      await done;
    },
  };
}
