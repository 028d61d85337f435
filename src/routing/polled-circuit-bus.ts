import type { GatewayLogger } from '../services.ts';
import type { CircuitBus, SharedCircuitChange } from './circuit-bus.ts';

/** A circuit open in the shared store: until when (wall-clock epoch ms), and which process opened it. */
export interface OpenCircuit {
  deploymentId: string;
  openUntil: number;
  origin: string;
}

/**
 * Where circuit changes are kept for runtimes with no push channel between their processes (Workers isolates, which
 * cannot hold a connection across requests; Deno with Upstash's HTTP API): a Durable Object, or a Redis hash over
 * HTTP. Each call answers every circuit open after it (none whose `openUntil` has passed), so a process that
 * publishes also learns what others did.
 */
export interface CircuitStore {
  /** Records an opening (until its `openUntil`) or a closing; answers the circuits open afterwards. */
  record(change: SharedCircuitChange): Promise<readonly OpenCircuit[]>;
  /** The circuits open now. */
  openCircuits(): Promise<readonly OpenCircuit[]>;
}

/** A {@link CircuitBus} that reads a {@link CircuitStore} now and then. */
export interface PolledCircuitBus extends CircuitBus {
  /**
   * Reads the store in the background when the last read is `refreshMs` old and none is under way; never waits and
   * never throws. Runtimes call it per request (Workers) or on a timer (Deno).
   */
  refreshIfDue(): void;
}

/** What {@link createPolledCircuitBus} is made with. */
export interface PolledCircuitBusOptions {
  /** How old the last read may get before the next (default 1000 ms): the propagation bound of a change. */
  refreshMs?: number;
  logger: GatewayLogger;
  /** Keeps background work alive past the request that started it (Workers' `waitUntil`); defaults to nothing. */
  keepAlive?: (work: Promise<unknown>) => void;
  /** Wall-clock epoch ms (openings travel as wall-clock ends); defaults to `Date.now`. */
  wallNow?: () => number;
  /** A monotonic clock in ms for the refresh interval; defaults to `performance.now`. */
  now?: () => number;
}

/** The default of {@link PolledCircuitBusOptions.refreshMs}. */
export const defaultCircuitRefreshMs = 1_000;

/** A read under way this long is given up on (its answer still applies if it comes), so one hung call stops nothing. */
const abandonReadAfterMs = 10_000;

/** While the store keeps failing, its failure is logged again at most this often. */
const repeatFailureLogMs = 60_000;

/** The origin of a closing learnt from a circuit's absence in the store (no process is named there). */
const storeOrigin = 'circuit-store';

/**
 * Circuit changes through a {@link CircuitStore}: `publish` records the change (in the background) and applies what the
 * store answers; {@link PolledCircuitBus.refreshIfDue} reads the store at most every `refreshMs`. A circuit that is
 * listed with a new `openUntil` is an opening; one that was listed and is gone before its end is a closing (another
 * process's probe found it well); one that ran out is left to each process's own breaker (it probes). So a change
 * reaches a process within `refreshMs` plus one store call of that process's next refresh. Nothing of this is on a
 * request's way, and a store that fails only costs each process its own first few failures.
 *
 * @example
 * const bus = createPolledCircuitBus(createDurableObjectCircuitStore(env.TORII_CIRCUITS), { logger, keepAlive });
 * bus.refreshIfDue(); // per request
 */
export function createPolledCircuitBus(store: CircuitStore, options: PolledCircuitBusOptions): PolledCircuitBus {
  const refreshMs = options.refreshMs ?? defaultCircuitRefreshMs;
  const wallNow = options.wallNow ?? Date.now;
  const now = options.now ?? (() => performance.now());
  const listeners = new Set<(change: SharedCircuitChange) => void>();
  // The end of each opening the store listed at the last read.
  const known = new Map<string, number>();
  let lastReadAt = Number.NEGATIVE_INFINITY;
  let readingSince: number | undefined;
  // When the store's current run of failures was last logged; undefined while it answers.
  let failureLoggedAt: number | undefined;

  const emit = (change: SharedCircuitChange) => {
    for (const listener of listeners) listener(change);
  };

  const apply = (open: readonly OpenCircuit[]) => {
    const at = wallNow();
    const listed = new Set<string>();
    for (const circuit of open) {
      if (!(circuit.openUntil > at)) continue;
      listed.add(circuit.deploymentId);
      if (known.get(circuit.deploymentId) === circuit.openUntil) continue;
      known.set(circuit.deploymentId, circuit.openUntil);
      emit({ origin: circuit.origin, deploymentId: circuit.deploymentId, state: 'open', openUntil: circuit.openUntil });
    }
    for (const [deploymentId, openUntil] of known) {
      if (listed.has(deploymentId)) continue;
      known.delete(deploymentId);
      if (openUntil > at) emit({ origin: storeOrigin, deploymentId, state: 'closed' });
    }
  };

  const run = (work: Promise<readonly OpenCircuit[]>, what: string) => {
    const settled = work.then(
      (open) => {
        if (failureLoggedAt !== undefined) options.logger.info('the shared circuit store answers again');
        failureLoggedAt = undefined;
        apply(open);
      },
      (error: unknown) => {
        // A store that is down fails every refresh: logged when it starts, then once a minute, not every second.
        const at = now();
        if (failureLoggedAt !== undefined && at - failureLoggedAt < repeatFailureLogMs) return;
        failureLoggedAt = at;
        options.logger.warn(`the shared circuit store could not be ${what}`, { error: String(error) });
      },
    );
    options.keepAlive?.(settled);
    return settled;
  };

  return {
    publish(change) {
      // This process's own change is not news to it: the store's echo of it must not read as another's.
      if (change.state === 'open') known.set(change.deploymentId, change.openUntil);
      else known.delete(change.deploymentId);
      lastReadAt = now();
      let recorded: Promise<readonly OpenCircuit[]>;
      try {
        recorded = store.record(change);
      } catch (error) {
        recorded = Promise.reject(error);
      }
      void run(recorded, 'written');
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    refreshIfDue() {
      const at = now();
      if (at - lastReadAt < refreshMs) return;
      if (readingSince !== undefined && at - readingSince < abandonReadAfterMs) return;
      lastReadAt = at;
      readingSince = at;
      let read: Promise<readonly OpenCircuit[]>;
      try {
        read = store.openCircuits();
      } catch (error) {
        read = Promise.reject(error);
      }
      void run(read, 'read').finally(() => {
        if (readingSince === at) readingSince = undefined;
      });
    },
  };
}
