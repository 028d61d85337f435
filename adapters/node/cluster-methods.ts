import type { KeyInvalidation } from '../../src/auth/key-invalidation.ts';
import type { KeyStore, VirtualKeyChanges, VirtualKeyPage } from '../../src/auth/key-store.ts';
import type { VirtualKeyRecord } from '../../src/auth/virtual-key-record.ts';
import type { GatewayErrorInit } from '../../src/errors.ts';
import type { LimitLease, LimitStore } from '../../src/limits/limit-store.ts';
import type { StoredResponse } from '../../src/responses/response-store.ts';
import type { SharedCircuitChange } from '../../src/routing/circuit-bus.ts';
import type { UsageEvent } from '../../src/usage/usage-event.ts';
import type { UsageSummaryOptions, UsageSummaryRow } from '../../src/usage/usage-query.ts';

/*
 * Everything that crosses the IPC channel between the cluster primary and its workers, by name: the methods the
 * primary serves (cluster-rpc.ts carries them), what it broadcasts, and the messages that travel outside the RPC
 * (circuit relay, metrics). Messages are JSON (`serialization: 'json'`, the cluster default): arguments and results
 * are plain data, `undefined` arrives as `null` (or as an absent field), a Map or Infinity does not survive.
 *
 * Not here: the start-up failure line and the heartbeat (cluster-primary.ts, cluster-worker-watch.ts), which the
 * primary's supervision reads.
 */

/**
 * A `GatewayError` the primary's key store threw (a 400 for a cursor it did not make, say), as it crosses the
 * IPC channel: the RPC carries only an error's message, which would turn the client's 400 into a 500.
 */
export interface KeyStoreRefusal {
  keyStoreRefusal: GatewayErrorInit;
}

/**
 * The methods the cluster primary serves its workers (see cluster-rpc.ts), by wire name. Each result is what the
 * worker receives: a handler may also answer with the value itself instead of a promise, and a method whose result
 * is `void` answers `null` on the wire. The `keys.*` methods of the admin API (all but the lookups by hash and
 * `keys.publishInvalidation`) answer a {@link KeyStoreRefusal} instead of failing when the key store refuses a call.
 *
 * Served by `primaryHandlers` (cluster-remote-services.ts) in a primary with a database; called by the `createRemote*`
 * seams there, used by a worker's data plane (openClusterWorkerDataPlane, node-data-plane.ts). The `cache.*`,
 * `limits.*` and `responses.*` methods are served only when the primary has what they need (see
 * {@link OptionalClusterMethod}); the others always. A primary without a database serves none.
 */
export interface ClusterMethods {
  /** The key whose secret hashes to `hash`, or null (lookups batched across workers). Worker: createRemoteKeyStore. */
  'keys.findByHash': (hash: string) => Promise<VirtualKeyRecord | null>;
  /** The keys of any of `hashes`, batched like `keys.findByHash`. Worker: createRemoteKeyStore (its lookup batcher). */
  'keys.findManyByHash': (hashes: readonly string[]) => Promise<VirtualKeyRecord[]>;
  /** The key with this id, or null. Worker: createRemoteKeyStore (the admin API). */
  'keys.findById': (id: string) => Promise<VirtualKeyRecord | null | KeyStoreRefusal>;
  /** Stores a new key. Worker: createRemoteKeyStore (the admin API). */
  'keys.create': (key: Parameters<KeyStore['create']>[0]) => Promise<VirtualKeyRecord | KeyStoreRefusal>;
  /** Applies changes to a key; null when no such key. Worker: createRemoteKeyStore (the admin API). */
  'keys.update': (id: string, changes: VirtualKeyChanges) => Promise<VirtualKeyRecord | null | KeyStoreRefusal>;
  /** Revokes a key; null when no such key. Worker: createRemoteKeyStore (the admin API). */
  'keys.revoke': (id: string) => Promise<VirtualKeyRecord | null | KeyStoreRefusal>;
  /** Gives a key a new secret's hash and prefix; null when no such key. Worker: createRemoteKeyStore (admin API). */
  'keys.rotate': (
    id: string,
    replacement: Parameters<KeyStore['rotate']>[1],
  ) => Promise<VirtualKeyRecord | null | KeyStoreRefusal>;
  /** One page of keys. Worker: createRemoteKeyStore (the admin API). */
  'keys.list': (options: Parameters<KeyStore['list']>[0]) => Promise<VirtualKeyPage | KeyStoreRefusal>;
  /**
   * Has the primary broadcast an invalidation on `keys.invalidation` to every worker (a no-op when Redis carries them).
   * Worker: createClusterInvalidationBus.
   */
  'keys.publishInvalidation': (invalidation: KeyInvalidation) => Promise<void>;
  /** Enqueues a batch of usage events in the primary's usage queue. Worker: createRemoteUsageSink. */
  'usage.accept': (events: readonly UsageEvent[]) => Promise<void>;
  /** Usage totals for the admin API's reports. Worker: createRemoteUsageQuery. */
  'usage.summarize': (options: UsageSummaryOptions) => Promise<UsageSummaryRow[]>;
  /** Spend of each key since `since` (a Map does not survive JSON: an object). Worker: createRemoteUsageQuery. */
  'usage.spendByKey': (keyIds: readonly string[], since: number) => Promise<Record<string, number>>;
  /** The primary's shared cache (no Redis): a value, or null. Worker: createRemoteKeyValueCache. */
  'cache.get': (key: string) => Promise<string | null>;
  /** Stores a value in the primary's shared cache. Worker: createRemoteKeyValueCache. */
  'cache.set': (key: string, value: string, options: { ttlSeconds: number }) => Promise<void>;
  /** Stores a value unless the key holds one; whether it did. Worker: createRemoteKeyValueCache. */
  'cache.setIfAbsent': (key: string, value: string, options: { ttlSeconds: number }) => Promise<boolean>;
  /** Deletes a key of the primary's shared cache. Worker: createRemoteKeyValueCache. */
  'cache.delete': (key: string) => Promise<void>;
  /** Leases units of a rate-limit counter (no Redis). Worker: createRemoteLimitStore. */
  'limits.lease': (request: Parameters<LimitStore['lease']>[0]) => Promise<LimitLease>;
  /** Gives back leased units. Worker: createRemoteLimitStore. */
  'limits.release': (request: Parameters<LimitStore['release']>[0]) => Promise<void>;
  /** Adds units without checking the limit. Worker: createRemoteLimitStore. */
  'limits.add': (request: Parameters<LimitStore['add']>[0]) => Promise<void>;
  /** Stores a Responses API response. Worker: createRemoteResponseStore. */
  'responses.put': (response: StoredResponse) => Promise<void>;
  /** A stored response, or null. Worker: createRemoteResponseStore. */
  'responses.get': (id: string) => Promise<StoredResponse | null>;
  /** A conversation back from `id`, at most `maxLength` long (finite: JSON has no Infinity). Worker: as above. */
  'responses.chain': (id: string, maxLength: number) => Promise<StoredResponse[]>;
  /** Deletes a stored response; whether there was one. Worker: createRemoteResponseStore. */
  'responses.delete': (id: string) => Promise<boolean>;
}

/** A method the primary serves, by wire name. */
export type ClusterMethod = keyof ClusterMethods;

/**
 * The methods a primary serves only when it holds what they need: `responses.*` with a response store, and, when
 * there is no Redis (which holds them otherwise), the shared cache (`cache.*`) and rate-limit counters (`limits.*`).
 * A worker calls them only in those cases; any other call is answered "unknown method".
 */
export type OptionalClusterMethod = Extract<
  ClusterMethod,
  `cache.${string}` | `limits.${string}` | `responses.${string}`
>;

/**
 * What the primary broadcasts to its workers, by channel (see `broadcastToWorkers` and `ClusterRpcClient.onBroadcast`
 * in cluster-rpc.ts).
 */
export interface ClusterBroadcasts {
  /**
   * A key changed: workers drop it from their caches. Sent by the primary (server.ts, through the data plane's
   * `setBroadcast`) for `keys.publishInvalidation` when there is no Redis; heard by createClusterInvalidationBus.
   */
  'keys.invalidation': KeyInvalidation;
  /**
   * Whether the primary's usage ledger can persist usage, when it changes and to each new worker when it cannot (sent
   * by server.ts); heard by openClusterWorkerDataPlane, whose `/health/ready` follows it.
   */
  'usage.ledger': { canPersist: boolean };
  /**
   * A circuit opened or closed in some worker: relayed to every worker by createCircuitRelay (and replayed to a new
   * one); heard by createClusterCircuitBus, which checks each change (parseSharedCircuitChange).
   */
  'torii:circuits': SharedCircuitChange;
  /**
   * Ends a replay: every opening still running was sent to the worker before it. Sent by createCircuitRelay in answer
   * to `torii:circuit-replay`; heard by createClusterCircuitBus's `whenSubscribed`.
   */
  'torii:circuits-replayed': Record<never, never>;
}

/** A broadcast channel, by wire name. */
export type ClusterBroadcastChannel = keyof ClusterBroadcasts;

/** One metric as `registry.getMetricsAsJSON()` gives it (the shape `AggregatorRegistry.aggregate` sums). */
export type MetricJson = object;

/**
 * The messages a worker sends its primary outside the RPC, by `type` (each travels as its fields plus `type`; see
 * {@link ClusterWorkerMessage}). None is answered through the RPC: each has its own answer, named below.
 */
export interface ClusterWorkerMessages {
  /** A circuit change to relay to every worker. Sent by createClusterCircuitBus; relayed by createCircuitRelay. */
  'torii:circuit-relay': { change: SharedCircuitChange };
  /**
   * A starting worker asks for the openings still running; answered on `torii:circuits`, then
   * `torii:circuits-replayed`. Sent by createClusterCircuitBus's `whenSubscribed`; answered by createCircuitRelay.
   */
  'torii:circuit-replay': Record<never, never>;
  /**
   * A worker's `/metrics` asks for the cluster-wide exposition; answered with `torii:metrics-response` of the same
   * id (the worker waits 10 s). Sent by createWorkerMetricsExposition; answered by the primary's metrics collector.
   */
  'torii:metrics-request': { id: number };
  /** A worker's answer to `torii:metrics-collect`: its registry. Sent by createWorkerMetricsExposition. */
  'torii:metrics-collected': { id: number; metrics: MetricJson[] };
}

/** The messages the primary sends a worker outside the RPC and the broadcasts, by `type`. */
export interface ClusterPrimaryMessages {
  /**
   * A collection round: every worker answers with `torii:metrics-collected` of the same id (the primary waits 3 s for
   * them by default). Sent by createClusterMetricsCollector's `collect`.
   */
  'torii:metrics-collect': { id: number };
  /** The cluster-wide exposition, in answer to a worker's `torii:metrics-request`. */
  'torii:metrics-response': { id: number; contentType: string; body: string };
}

/** A worker's message of this type as it crosses the channel: its fields and its `type`. */
export type ClusterWorkerMessage<Type extends keyof ClusterWorkerMessages> = {
  type: Type;
} & ClusterWorkerMessages[Type];

/** A primary's message of this type as it crosses the channel: its fields and its `type`. */
export type ClusterPrimaryMessage<Type extends keyof ClusterPrimaryMessages> = {
  type: Type;
} & ClusterPrimaryMessages[Type];
