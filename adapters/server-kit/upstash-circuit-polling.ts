import { createPolledCircuitBus, type PolledCircuitBus } from '../../src/routing/polled-circuit-bus.ts';
import type { GatewayLogger } from '../../src/services.ts';
import { createUpstashCircuitStore } from '../shared/upstash-circuit-store.ts';
import { createUpstashRedisClient } from '../shared/upstash-redis-client.ts';
import type { ServerSettings } from './server-environment.ts';

/** A circuit bus read from Upstash on a timer, and how to stop the timer. */
export interface UpstashCircuitPolling {
  bus: PolledCircuitBus;
  stop(): void;
}

/**
 * With Upstash, circuit changes are shared with every other instance through a hash there, read every
 * `circuitRefreshMs` on a timer that keeps no process alive (`unrefTimer`: Upstash's REST API has no push).
 * Undefined without Upstash.
 *
 * @example
 * const circuits = openUpstashCircuitPolling(settings, logger, (timer) => Deno.unrefTimer(timer));
 */
export function openUpstashCircuitPolling(
  settings: ServerSettings,
  logger: GatewayLogger,
  unrefTimer: (timer: ReturnType<typeof setInterval>) => void,
): UpstashCircuitPolling | undefined {
  if (settings.upstash === undefined) return undefined;
  const store = createUpstashCircuitStore({ redis: createUpstashRedisClient(settings.upstash) });
  const bus = createPolledCircuitBus(store, { logger, refreshMs: settings.circuitRefreshMs });
  // Four looks per interval, so a read is never more than a quarter interval late.
  const timer = setInterval(() => bus.refreshIfDue(), Math.max(25, settings.circuitRefreshMs / 4));
  unrefTimer(timer);
  bus.refreshIfDue();
  return { bus, stop: () => clearInterval(timer) };
}
