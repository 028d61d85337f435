import { GatewayError } from '../errors.ts';
import type { KeyStore } from './key-store.ts';
import type { VirtualKeyRecord } from './virtual-key-record.ts';

/** How much key-store work lookups of keys missing from every cache may cause; see {@link createKeyStoreLookupBatcher}. */
export interface KeyStoreLookupLimits {
  /** Store queries in flight at once. Default 4 (`TORII_KEY_LOOKUP_CONCURRENCY` on Node). */
  maxConcurrent?: number;
  /** Hashes in one `findManyByHash` query. Default 500. */
  maxBatchSize?: number;
  /**
   * Hashes waiting for a query; past it a lookup is refused with a 503 `key_lookup_busy`. Default 10,000
   * (`TORII_KEY_LOOKUP_QUEUE_MAX` on Node). `Infinity` where the callers bound it themselves (the cluster primary,
   * whose workers each send at most `maxConcurrent` batches).
   */
  maxQueued?: number;
}

/** Counts of a {@link KeyStoreLookupBatcher}, for tests and metrics. */
export interface KeyStoreLookupStats {
  /** Queries sent to the store since start. */
  queries: number;
  /** Queries in flight now. */
  inFlight: number;
  /** Hashes waiting now. */
  queued: number;
  /** Lookups refused since start because the queue was full. */
  refused: number;
}

/** Looks keys up in the store within {@link KeyStoreLookupLimits}. */
export interface KeyStoreLookupBatcher {
  /** The record whose hash is `hash`, or undefined; rejects with a 503 `key_lookup_busy` when the queue is full. */
  find(hash: string): Promise<VirtualKeyRecord | undefined>;
  /** The records of `hashes` (in no particular order, absent ones left out), as one queued group. */
  findMany(hashes: readonly string[]): Promise<VirtualKeyRecord[]>;
  stats(): KeyStoreLookupStats;
}

/** Options of {@link createKeyStoreLookupBatcher}. */
export interface KeyStoreLookupBatcherOptions extends KeyStoreLookupLimits {
  /**
   * Called on a refusal, at most once per `refusalReportIntervalMs`, with the refusals since the previous call (a
   * flood must not become one log line per request).
   */
  onRefusals?: (refused: number, limits: { maxQueued: number }) => void;
  /** Default 10 s. */
  refusalReportIntervalMs?: number;
  /** Monotonic clock, ms; defaults to performance.now. */
  monotonicNow?: () => number;
}

interface Waiter {
  resolve: (record: VirtualKeyRecord | undefined) => void;
  reject: (error: unknown) => void;
}

/** The 503 a lookup gets when too many unknown keys are waiting for the store. */
export function keyLookupBusyError(): GatewayError {
  return new GatewayError({
    status: 503,
    type: 'api_error',
    code: 'key_lookup_busy',
    retryable: true,
    headers: { 'retry-after': '1' },
    message: 'The gateway is checking too many unknown API keys right now. Try again shortly.',
  });
}

const positiveWholeNumber = (name: string, value: number): number => {
  if (!(Number.isInteger(value) && value >= 1) && value !== Number.POSITIVE_INFINITY)
    throw new RangeError(`${name} must be a whole number from 1, got ${value}.`);
  return value;
};

/**
 * Bounds the store work that keys missing from every cache can cause. At most `maxConcurrent` queries are in
 * flight; a lookup while there is room and nothing waits goes out at once, alone, with the store's `findByHash`
 * (no added latency normally). Lookups arriving while the limit is reached wait in one FIFO queue and go out
 * together, up to `maxBatchSize` hashes in one `findManyByHash` query, as soon as a query finishes. Past
 * `maxQueued` waiting hashes, lookups are refused with a 503 `key_lookup_busy` and `retry-after: 1`. So a flood of
 * N distinct forged keys (anyone can mint well-formed ones: the checksum is public) costs the store about
 * N / `maxBatchSize` queries, never more than `maxConcurrent` at a time, while keys already cached never wait here.
 * Concurrent lookups of one hash that is still queued share its place.
 *
 * @example
 * const lookups = createKeyStoreLookupBatcher(store, { maxConcurrent: 4, maxQueued: 10_000 });
 * const record = await lookups.find(hash);
 */
export function createKeyStoreLookupBatcher(
  store: Pick<KeyStore, 'findByHash' | 'findManyByHash'>,
  options: KeyStoreLookupBatcherOptions = {},
): KeyStoreLookupBatcher {
  const maxConcurrent = positiveWholeNumber('maxConcurrent', options.maxConcurrent ?? 4);
  const maxBatchSize = positiveWholeNumber('maxBatchSize', options.maxBatchSize ?? 500);
  const maxQueued = positiveWholeNumber('maxQueued', options.maxQueued ?? 10_000);
  const reportIntervalMs = options.refusalReportIntervalMs ?? 10_000;
  const monotonicNow = options.monotonicNow ?? (() => performance.now());
  /** Insertion order is arrival order: batches are taken from the front. */
  const queue = new Map<string, Waiter[]>();
  let inFlight = 0;
  let queries = 0;
  let refused = 0;
  let unreported = 0;
  let lastReport = Number.NEGATIVE_INFINITY;

  const query = async (hashes: string[]): Promise<VirtualKeyRecord[]> => {
    if (hashes.length > 1) return store.findManyByHash(hashes);
    const record = await store.findByHash(hashes[0]!);
    return record === undefined ? [] : [record];
  };

  const send = (batch: Map<string, Waiter[]>): void => {
    inFlight++;
    queries++;
    query([...batch.keys()]).then(
      (records) => {
        inFlight--;
        const byHash = new Map<string, VirtualKeyRecord>();
        for (const record of records) byHash.set(record.hash, record);
        for (const [hash, waiters] of batch) for (const waiter of waiters) waiter.resolve(byHash.get(hash));
        drain();
      },
      (error: unknown) => {
        inFlight--;
        for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
        drain();
      },
    );
  };

  function drain(): void {
    while (inFlight < maxConcurrent && queue.size > 0) {
      const batch = new Map<string, Waiter[]>();
      for (const [hash, waiters] of queue) {
        batch.set(hash, waiters);
        queue.delete(hash);
        if (batch.size >= maxBatchSize) break;
      }
      send(batch);
    }
  }

  const refuse = (count: number): GatewayError => {
    refused += count;
    unreported += count;
    const now = monotonicNow();
    if (options.onRefusals !== undefined && now - lastReport >= reportIntervalMs) {
      lastReport = now;
      const reported = unreported;
      unreported = 0;
      options.onRefusals(reported, { maxQueued });
    }
    return keyLookupBusyError();
  };

  const enqueue = (hash: string): Promise<VirtualKeyRecord | undefined> =>
    new Promise((resolve, reject) => {
      const waiting = queue.get(hash);
      if (waiting === undefined) queue.set(hash, [{ resolve, reject }]);
      else waiting.push({ resolve, reject });
    });

  return {
    find(hash) {
      if (!queue.has(hash) && queue.size >= maxQueued) return Promise.reject(refuse(1));
      const found = enqueue(hash);
      drain();
      return found;
    },
    async findMany(hashes) {
      const unique = [...new Set(hashes)];
      const fresh = unique.filter((hash) => !queue.has(hash)).length;
      if (fresh > 0 && queue.size + fresh > maxQueued) throw refuse(unique.length);
      const found = unique.map(enqueue);
      drain();
      const records = await Promise.all(found);
      return records.filter((record) => record !== undefined);
    },
    stats: () => ({ queries, inFlight, queued: queue.size, refused }),
  };
}
