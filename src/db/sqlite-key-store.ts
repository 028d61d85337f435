import { and, desc, eq, isNull, sql, type SQL } from 'drizzle-orm';
import type { KeyStore, NewVirtualKey, VirtualKeyPage } from '../auth/key-store.ts';
import type { VirtualKeyRecord } from '../auth/virtual-key-record.ts';
import { invalidRequest } from '../errors.ts';
import type { DrizzleKeyStoreOptions } from './drizzle-key-store.ts';
import { decodeKeyListCursor, encodeKeyListCursor } from './key-list-cursor.ts';
import type { ToriiSqliteDatabase } from './sqlite-database.ts';
import { sqliteVirtualKeys as virtualKeys } from './sqlite-schema.ts';
import { virtualKeyColumnsOf as columnsOf, virtualKeyFromRow } from './virtual-key-row.ts';

/** Options of {@link createSqliteKeyStore}: the same as the Postgres store's. */
export type SqliteKeyStoreOptions = DrizzleKeyStoreOptions;

type VirtualKeyValues = Partial<typeof virtualKeys.$inferInsert>;

/**
 * The {@link KeyStore} over the embedded SQLite database, with the Postgres store's behaviour
 * (src/db/drizzle-key-store.ts): every change is one `UPDATE ... RETURNING` that bumps `version` in the database,
 * and `list` pages newest first by `(created_at, id)` with the same opaque cursor, served by the same indexes. The
 * hashes of `findManyByHash` go as one JSON array parameter (`in (select value from json_each(?))`), so any number
 * of them stays within SQLite's bound-parameter limit.
 *
 * @example
 * ```ts
 * const store = createSqliteKeyStore(database.db);
 * const key = await store.create({ id: 'key_1', hash: await sha256Hex(secret), prefix: 'sk-torii-AbCd', name: 'ci' });
 * await store.revoke(key.id); // version 2; revoking again changes nothing
 * ```
 */
export function createSqliteKeyStore(db: ToriiSqliteDatabase, options: SqliteKeyStoreOptions = {}): KeyStore {
  const now = options.now ?? Date.now;

  const findOne = async (condition: SQL): Promise<VirtualKeyRecord | undefined> => {
    const [row] = await db.select().from(virtualKeys).where(condition).limit(1);
    return row ? virtualKeyFromRow(row) : undefined;
  };

  /** Applies `values` to the key (only where `condition` also holds), bumping its version. */
  const change = async (
    id: string,
    values: VirtualKeyValues,
    condition?: SQL,
  ): Promise<VirtualKeyRecord | undefined> => {
    const [row] = await db
      .update(virtualKeys)
      .set({ ...values, version: sql`${virtualKeys.version} + 1`, updatedAt: new Date(now()) })
      .where(condition ? and(eq(virtualKeys.id, id), condition) : eq(virtualKeys.id, id))
      .returning();
    return row ? virtualKeyFromRow(row) : undefined;
  };

  return {
    findByHash: (hash) => findOne(eq(virtualKeys.keyHash, hash)),
    findById: (id) => findOne(eq(virtualKeys.id, id)),

    async findManyByHash(hashes) {
      if (hashes.length === 0) return [];
      const rows = await db
        .select()
        .from(virtualKeys)
        .where(sql`${virtualKeys.keyHash} in (select value from json_each(${JSON.stringify([...new Set(hashes)])}))`);
      return rows.map(virtualKeyFromRow);
    },

    async create(key: NewVirtualKey & { id: string; hash: string; prefix: string }) {
      const createdAt = new Date(now());
      const [row] = await db
        .insert(virtualKeys)
        .values({
          owner: null,
          team: null,
          metadata: {},
          allowedModelGroups: null,
          rpmLimit: null,
          tpmLimit: null,
          expiresAt: null,
          ...columnsOf(key),
          id: key.id,
          keyHash: key.hash,
          keyPrefix: key.prefix,
          name: key.name,
          disabled: false,
          revokedAt: null,
          version: 1,
          createdAt,
          updatedAt: createdAt,
        })
        .returning();
      if (!row) throw new Error(`insert of key ${key.id} returned no row`);
      return virtualKeyFromRow(row);
    },

    async update(id, changes) {
      const values = columnsOf(changes);
      // Nothing to change is not a change: the version stays.
      if (Object.keys(values).length === 0) return findOne(eq(virtualKeys.id, id));
      return change(id, values);
    },

    async revoke(id) {
      const revoked = await change(id, { revokedAt: new Date(now()) }, isNull(virtualKeys.revokedAt));
      // Already revoked (first revocation time and version kept) or no such key.
      return revoked ?? findOne(eq(virtualKeys.id, id));
    },

    rotate: (id, replacement) =>
      change(id, { keyHash: replacement.hash, keyPrefix: replacement.prefix }, isNull(virtualKeys.revokedAt)),

    async list({ limit, cursor, owner, team }): Promise<VirtualKeyPage> {
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
        throw invalidRequest('limit must be an integer from 1 to 100.', 'limit');
      }
      const conditions: SQL[] = [];
      if (owner !== undefined) conditions.push(eq(virtualKeys.owner, owner));
      if (team !== undefined) conditions.push(eq(virtualKeys.team, team));
      if (cursor !== undefined) {
        const after = decodeKeyListCursor(cursor);
        // A row value comparison, like Postgres's; `created_at` holds epoch ms.
        conditions.push(sql`(${virtualKeys.createdAt}, ${virtualKeys.id}) < (${after.createdAt}, ${after.id})`);
      }
      const rows = await db
        .select()
        .from(virtualKeys)
        .where(and(...conditions))
        .orderBy(desc(virtualKeys.createdAt), desc(virtualKeys.id))
        .limit(limit + 1);
      const keys = rows.slice(0, limit).map(virtualKeyFromRow);
      const last = keys.at(-1);
      return {
        keys,
        nextCursor:
          rows.length > limit && last ? encodeKeyListCursor({ createdAt: last.createdAt, id: last.id }) : undefined,
      };
    },
  };
}
