/** A key changed (updated, revoked, rotated): caches holding a version below `version` must drop it. */
export interface KeyInvalidation {
  /** The hashes the change concerns (a rotation names the old and the new one). */
  hashes: string[];
  version: number;
}

/**
 * How a key change reaches every process: Redis pub/sub on Node (across cluster workers and instances); on
 * Workers there is no bus and a short local TTL bounds staleness instead. `publish` is called by the admin path
 * after the database and the shared cache hold the new record.
 */
export interface KeyInvalidationBus {
  publish(invalidation: KeyInvalidation): Promise<void>;
  /** Calls `listener` for every invalidation published by any process (this one included); returns unsubscribe. */
  subscribe(listener: (invalidation: KeyInvalidation) => void): () => void;
}
