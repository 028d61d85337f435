import type { KeyStore } from '../../src/auth/key-store.ts';
import type { ToriiDatabase } from '../../src/db/database.ts';
import { createDrizzleKeyStore } from '../../src/db/drizzle-key-store.ts';
import { createDrizzleResponseStore, type DrizzleResponseStoreOptions } from '../../src/db/drizzle-response-store.ts';
import { createDrizzleUsageQuery } from '../../src/db/drizzle-usage-query.ts';
import { createDrizzleUsageSink } from '../../src/db/drizzle-usage-sink.ts';
import type { ResponseStore } from '../../src/responses/response-store.ts';
import type { UsageSink } from '../../src/usage/usage-event.ts';
import type { UsageQuery } from '../../src/usage/usage-query.ts';
import type { WorkerDatabase } from './worker-database.ts';

/**
 * The Drizzle {@link KeyStore} (src/db) with each call on a connection of its own (see {@link WorkerDatabase}).
 *
 * @example
 * ```ts
 * const keyStore = createWorkerKeyStore(database);
 * const record = await keyStore.findByHash(hash);
 * ```
 */
export function createWorkerKeyStore(database: WorkerDatabase): KeyStore {
  return {
    findByHash: (hash) => database.use((db) => createDrizzleKeyStore(db).findByHash(hash)),
    findManyByHash: (hashes) => database.use((db) => createDrizzleKeyStore(db).findManyByHash(hashes)),
    findById: (id) => database.use((db) => createDrizzleKeyStore(db).findById(id)),
    create: (key) => database.use((db) => createDrizzleKeyStore(db).create(key)),
    update: (id, changes) => database.use((db) => createDrizzleKeyStore(db).update(id, changes)),
    revoke: (id) => database.use((db) => createDrizzleKeyStore(db).revoke(id)),
    rotate: (id, replacement) => database.use((db) => createDrizzleKeyStore(db).rotate(id, replacement)),
    list: (options) => database.use((db) => createDrizzleKeyStore(db).list(options)),
  };
}

/** The Drizzle {@link UsageQuery} (src/db) with each call on a connection of its own. */
export function createWorkerUsageQuery(database: WorkerDatabase): UsageQuery {
  return {
    summarize: (options) => database.use((db) => createDrizzleUsageQuery(db).summarize(options)),
    spendByKey: (keyIds, since) => database.use((db) => createDrizzleUsageQuery(db).spendByKey(keyIds, since)),
  };
}

/** The Drizzle {@link UsageSink} (src/db): one multi-row insert per batch, idempotent on `request_id`. */
export function createWorkerUsageSink(database: WorkerDatabase): UsageSink {
  return { write: (events) => database.use((db) => createDrizzleUsageSink(db).write(events)) };
}

/**
 * The Drizzle {@link ResponseStore} (src/db) with each call on a connection of its own. Its occasional sweep of expired
 * rows runs inside the `put` that draws it, so it finishes before that call's connection ends.
 */
export function createWorkerResponseStore(
  database: WorkerDatabase,
  options: DrizzleResponseStoreOptions = {},
): ResponseStore {
  const store = (db: ToriiDatabase) => createDrizzleResponseStore(db, options);
  return {
    put: (response) => database.use((db) => store(db).put(response)),
    get: (id) => database.use((db) => store(db).get(id)),
    chain: (id, maxLength) => database.use((db) => store(db).chain(id, maxLength)),
    delete: (id) => database.use((db) => store(db).delete(id)),
  };
}
