import type { Authenticator } from '../../src/auth/authenticator.ts';
import type { GatewayAccounting } from '../../src/accounting/gateway-accounting.ts';
import type { GatewayOptions } from '../../src/gateway.ts';
import type { ResponseStore } from '../../src/responses/response-store.ts';
import type { CircuitBus } from '../../src/routing/circuit-bus.ts';
import type { UsageQueue } from '../../src/usage/usage-queue.ts';

/**
 * Keys, limits, budgets, the usage ledger and the Responses API's stored responses of one server process, however its
 * runtime opened them (a Node data plane, the standalone server's database and Upstash): what the server kit hands to
 * `createGateway`, asks for readiness, names in the start-up line and closes at shutdown.
 */
export interface ProcessAccounting {
  /** Virtual keys (and the master key). */
  authenticator: Authenticator;
  accounting: GatewayAccounting;
  administration: NonNullable<GatewayOptions['administration']>;
  responseStore: ResponseStore;
  /** The request path's usage queue (its stats are exported as metrics). */
  usageQueue: UsageQueue;
  /** How circuit openings reach other processes, when the accounting's backends carry them (Redis, the primary). */
  circuitBus?: CircuitBus | undefined;
  /** Whether usage can be persisted now (database, or else the spill); false turns `/health/ready` to 503. */
  canPersistUsage(): boolean;
  /** What it is made of, for the start-up line (`database`, `sharedCache`, `rateLimitMode`, ...). */
  description: Record<string, unknown>;
  /** Pushes pending budget spend, flushes usage (the rest to the spill after `timeoutMs`), closes connections. */
  close(options: { timeoutMs: number }): Promise<void>;
}
