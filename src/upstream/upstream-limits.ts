import type { DeploymentConfig, GatewayConfig } from '../config/config-schema.ts';

/** The bounds of every call to one deployment: how long each phase may take and how much the gateway will hold. */
export interface UpstreamLimits {
  /** Until the response headers arrive, ms. */
  headersTimeoutMs: number;
  /** Reading a whole (non-stream) body after the headers, ms. */
  bodyTimeoutMs: number;
  /** The longest gap between bytes of a streamed answer while the client waits for more, ms. */
  streamIdleTimeoutMs: number;
  /** The largest non-stream answer the gateway reads, bytes; past it the client gets a 502. */
  maxBodyBytes: number;
  /** The largest upstream error body read (for its message), bytes; past it the error is reported without one. */
  maxErrorBodyBytes: number;
  /** Opening a connection to it, ms (Node's client; undefined: the client's default). */
  connectTimeoutMs?: number | undefined;
  /** The whole call, from sending to the last byte of the answer or stream, ms; undefined: none. */
  totalTimeoutMs?: number | undefined;
}

/**
 * The defaults: LLM answers can take minutes before their headers (a long non-stream generation) and reasoning
 * models can think for minutes without a byte between stream events, so the timeouts are generous; they exist so
 * that a stalled upstream cannot hold a client and a connection forever.
 */
export const defaultUpstreamLimits: UpstreamLimits = {
  headersTimeoutMs: 600_000,
  bodyTimeoutMs: 300_000,
  streamIdleTimeoutMs: 300_000,
  maxBodyBytes: 64 * 1024 * 1024,
  maxErrorBodyBytes: 1024 * 1024,
};

/** A deployment's bounds: its own settings, else the config's `server` settings, else the defaults. */
export function resolveUpstreamLimits(
  server: GatewayConfig['server'],
  deployment: Pick<DeploymentConfig, 'timeouts'>,
): UpstreamLimits {
  const own = deployment.timeouts;
  return {
    headersTimeoutMs: own?.headersMs ?? server?.upstreamTimeoutMs ?? defaultUpstreamLimits.headersTimeoutMs,
    bodyTimeoutMs: own?.bodyMs ?? server?.upstreamBodyTimeoutMs ?? defaultUpstreamLimits.bodyTimeoutMs,
    streamIdleTimeoutMs:
      own?.streamIdleMs ?? server?.upstreamStreamIdleTimeoutMs ?? defaultUpstreamLimits.streamIdleTimeoutMs,
    maxBodyBytes: server?.upstreamMaxBodyBytes ?? defaultUpstreamLimits.maxBodyBytes,
    maxErrorBodyBytes: server?.upstreamMaxErrorBodyBytes ?? defaultUpstreamLimits.maxErrorBodyBytes,
    connectTimeoutMs: own?.connectMs,
    totalTimeoutMs: own?.totalMs,
  };
}
