import type { LimitLease, LimitStore } from '../../src/limits/limit-store.ts';

/** The window a rate-limit call names (see {@link LimitStore}). */
export interface KeyCountersWindow {
  counter: string;
  windowStart: number;
  windowMs: number;
}

/** The spend counter a budget call names, within its key's object (see `BudgetSpendCounters`). */
export interface KeyCountersSpendCounter {
  /** The budget period's label (`2025-06-01`, `total`). */
  periodLabel: string;
  /** How long the counter lives after a write. */
  ttlSeconds: number;
}

/**
 * What one `ToriiKeyCounters` Durable Object answers over RPC: one key's rate-limit windows (the {@link LimitStore}
 * methods, with the same meaning) and its budget spend counters. Each call runs alone in the object, so each is
 * atomic. The class in key-counters-durable-object.ts implements it; a stub from {@link KeyCountersNamespace.get}
 * has these methods.
 */
export interface KeyCountersObject {
  lease(request: KeyCountersWindow & { amount: number; limit: number; minimum?: number }): Promise<LimitLease>;
  release(request: KeyCountersWindow & { amount: number }): Promise<void>;
  add(request: KeyCountersWindow & { amount: number }): Promise<void>;
  /** Adds spend to a counter (a counter that expired starts again from zero) and renews its TTL. */
  addSpend(counter: KeyCountersSpendCounter, amountUsd: number): Promise<void>;
  /** The counter's total, 0 when it does not exist or has expired. */
  readSpend(counter: Pick<KeyCountersSpendCounter, 'periodLabel'>): Promise<number>;
  /** Raises the counter to at least `ledgerUsd` (renewing its TTL when it writes), never lowering it; the total after. */
  raiseSpendTo(counter: KeyCountersSpendCounter, ledgerUsd: number): Promise<number>;
}

/**
 * The part of a Workers `DurableObjectNamespace` binding for `ToriiKeyCounters` that the stores use (declared here
 * rather than depending on @cloudflare/workers-types; the platform's binding satisfies it).
 */
export interface KeyCountersNamespace {
  /** The object's id for a name: the same name always gives the same object, worldwide. */
  idFromName(name: string): object;
  /** A stub for the object (cheap, no I/O until a method is called). */
  get(id: object): KeyCountersObject;
}

/** What the Durable Object stores are made with. */
export interface KeyCountersOptions {
  /**
   * Put before every object name, so two deployments (or tests) can share one namespace without sharing counters.
   * Defaults to none.
   */
  objectNamePrefix?: string;
}

/**
 * The object (before the prefix) that holds a key's counters: `key:<keyId>`. The rate limiter's counters are
 * `rpm:<keyId>` and `tpm:<keyId>`, so the part after the first `:` is the key id and both counters, and the key's
 * budget spend, live in one object. A counter with no `:` (or nothing after it) gets an object of its own name. Two
 * counters sharing an object only share its single thread: the object keeps every counter apart by its full name.
 */
export function keyCountersObjectName(counter: string): string {
  const separator = counter.indexOf(':');
  const keyId = separator >= 0 && separator < counter.length - 1 ? counter.slice(separator + 1) : counter;
  return keyCountersObjectNameOfKey(keyId);
}

/** The object (before the prefix) that holds the counters of key `keyId`. */
export function keyCountersObjectNameOfKey(keyId: string): string {
  return `key:${keyId}`;
}

/**
 * Finds a key's object: a fresh stub every call, because workerd forbids using an I/O object (a stub included) in a
 * request other than the one that made it, and the stores live as long as the isolate. Making a stub costs no I/O.
 */
export function keyCountersObjectFinder(
  namespace: KeyCountersNamespace,
  options: KeyCountersOptions = {},
): (objectName: string) => KeyCountersObject {
  const prefix = options.objectNamePrefix ?? '';
  return (objectName) => namespace.get(namespace.idFromName(prefix + objectName));
}

/**
 * A {@link LimitStore} over the `ToriiKeyCounters` Durable Object: one object per key (`key:<keyId>`, see
 * {@link keyCountersObjectName}), one RPC per call. Exact: the object runs one call at a time, so concurrent leases
 * from every isolate and location never grant more than the limit. Windows live in the object's memory only (they
 * last one window): an object that is evicted or restarted mid-window forgets what that window used, which then
 * starts again from zero. Cost: one round trip to the object's location per call; with the limiter's `leased` mode
 * that is one call per slice, not per request.
 *
 * @example
 * ```ts
 * // wrangler.toml: [[durable_objects.bindings]] name = "TORII_KEY_COUNTERS", class_name = "ToriiKeyCounters"
 * export { ToriiKeyCounters } from './key-counters-durable-object.ts';
 * const store = createDurableObjectLimitStore(env.TORII_KEY_COUNTERS);
 * const limiter = createRateLimiter({ mode: 'leased', store, waitUntil: (work) => context.waitUntil(work) });
 * ```
 */
export function createDurableObjectLimitStore(
  namespace: KeyCountersNamespace,
  options: KeyCountersOptions = {},
): LimitStore {
  const objectFor = keyCountersObjectFinder(namespace, options);
  const objectOf = (counter: string) => objectFor(keyCountersObjectName(counter));
  return {
    async lease({ counter, windowStart, windowMs, amount, limit, minimum }): Promise<LimitLease> {
      const { granted, used } = await objectOf(counter).lease({
        counter,
        windowStart,
        windowMs,
        amount,
        limit,
        minimum: minimum ?? 1,
      });
      return { granted, used };
    },
    async release({ counter, windowStart, windowMs, amount }): Promise<void> {
      if (!(amount > 0)) return;
      await objectOf(counter).release({ counter, windowStart, windowMs, amount });
    },
    async add({ counter, windowStart, windowMs, amount }): Promise<void> {
      if (!(amount > 0)) return;
      await objectOf(counter).add({ counter, windowStart, windowMs, amount });
    },
  };
}
