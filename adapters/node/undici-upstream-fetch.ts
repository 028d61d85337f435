import { Agent, type Dispatcher } from 'undici';
import type { UpstreamFetch, UpstreamResponse } from '../../src/services.ts';
import { UpstreamLimitError } from '../../src/upstream/upstream-limit-error.ts';
import { UndiciDispatchResponse } from './undici-dispatch-response.ts';

/** Pool settings of the Node upstream client. */
export interface UndiciUpstreamOptions {
  /** Idle keep-alive time of pooled upstream connections, ms (default 60000). */
  keepAliveTimeoutMs?: number;
  /** Connections per upstream origin (default 512). */
  connectionsPerOrigin?: number;
  /** TCP/TLS connect timeout, ms (default 10000). */
  connectTimeoutMs?: number;
}

/** undici's headers timeout, as the {@link UpstreamLimitError} the UpstreamFetch contract names. */
function asLimitError(error: Error, headersTimeoutMs: number): Error {
  if ((error as Error & { code?: string }).code === 'UND_ERR_HEADERS_TIMEOUT')
    return new UpstreamLimitError('headers-timeout', headersTimeoutMs);
  return error;
}

interface ParsedTarget {
  origin: string;
  path: string;
}

/**
 * The Node upstream client: undici's lowest-level `dispatch` over one shared Agent, so connections to each upstream
 * origin are pooled and kept alive, and a response costs no Node stream objects (see UndiciDispatchResponse).
 * Upstream URLs come from the config, so their parsed form is cached.
 *
 * @example
 * const gateway = createGateway({ ..., services: { upstreamFetch: createUndiciUpstreamFetch() } });
 */
export function createUndiciUpstreamFetch(options: UndiciUpstreamOptions = {}): UpstreamFetch {
  const defaultConnectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const agentWith = (connectTimeoutMs: number) =>
    new Agent({
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 60_000,
      keepAliveMaxTimeout: 600_000,
      connections: options.connectionsPerOrigin ?? 512,
      connect: { timeout: connectTimeoutMs },
      // LLM responses can take minutes before the first byte; the gateway applies its own configured timeout.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  const agent = agentWith(defaultConnectTimeoutMs);
  // A deployment with its own connect timeout gets a pool of its own (undici sets it per pool, not per request); the
  // values come from the config (one per deployment at most), so the map stays small.
  const agents = new Map<number, Agent>([[defaultConnectTimeoutMs, agent]]);
  const agentFor = (connectTimeoutMs: number | undefined): Agent => {
    if (connectTimeoutMs === undefined) return agent;
    let found = agents.get(connectTimeoutMs);
    if (found === undefined) {
      found = agentWith(connectTimeoutMs);
      agents.set(connectTimeoutMs, found);
    }
    return found;
  };
  const targets = new Map<string, ParsedTarget>();
  const parse = (url: string): ParsedTarget => {
    let target = targets.get(url);
    if (target === undefined) {
      const parsed = new URL(url);
      target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
      if (targets.size < 1_000) targets.set(url, target);
    }
    return target;
  };

  return (url, init) =>
    new Promise<UpstreamResponse>((resolve, reject) => {
      const { origin, path } = parse(url);
      const signal = init.signal;
      let response: UndiciDispatchResponse | undefined;
      let dispatchController: Dispatcher.DispatchController | undefined;
      const onAbort = (): void =>
        dispatchController?.abort(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      const cleanup = (): void => signal.removeEventListener('abort', onAbort);
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(controller) {
          dispatchController = controller;
          if (signal.aborted) onAbort();
          else signal.addEventListener('abort', onAbort, { once: true });
        },
        onResponseStart(controller, statusCode, headers) {
          response = new UndiciDispatchResponse(statusCode, headers, controller, init.bodyTimeoutMs);
          resolve(response);
        },
        onResponseData(_controller, chunk) {
          response?.push(chunk);
        },
        onResponseEnd() {
          cleanup();
          response?.end();
        },
        onResponseError(_controller, error) {
          cleanup();
          if (response === undefined) reject(asLimitError(error, init.headersTimeoutMs));
          else response.fail(error);
        },
      };
      agentFor(init.connectTimeoutMs).dispatch(
        {
          origin,
          path,
          method: init.method as Dispatcher.HttpMethod,
          headers: init.headers,
          body: init.body,
          // undici's own timer: no AbortController or setTimeout of ours per request.
          headersTimeout: init.headersTimeoutMs,
        },
        handler,
      );
    });
}
