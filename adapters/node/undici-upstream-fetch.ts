import { Agent, fetch as undiciFetch } from 'undici';
import type { UpstreamFetch } from '../../src/services.ts';

/** Pool settings of the Node upstream client. */
export interface UndiciUpstreamOptions {
  /** Idle keep-alive time of pooled upstream connections, ms (default 60000). */
  keepAliveTimeoutMs?: number;
  /** Connections per upstream origin (default 512). */
  connectionsPerOrigin?: number;
  /** TCP/TLS connect timeout, ms (default 10000). */
  connectTimeoutMs?: number;
}

/**
 * The Node upstream client: undici's fetch over one shared Agent, so connections to each upstream origin are pooled
 * and kept alive across requests.
 *
 * @example
 * const gateway = createGateway({ ..., services: { upstreamFetch: createUndiciUpstreamFetch() } });
 */
export function createUndiciUpstreamFetch(options: UndiciUpstreamOptions = {}): UpstreamFetch {
  const agent = new Agent({
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 60_000,
    keepAliveMaxTimeout: 600_000,
    connections: options.connectionsPerOrigin ?? 512,
    connect: { timeout: options.connectTimeoutMs ?? 10_000 },
    // LLM responses can take minutes before the first byte; the gateway applies its own configured timeout.
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  return (url, init) =>
    undiciFetch(url, {
      ...(init as Parameters<typeof undiciFetch>[1]),
      dispatcher: agent,
    }) as unknown as Promise<Response>;
}
