import { and, desc, eq, isNull, sql, type SQL } from 'drizzle-orm';
import type { KeyStore, NewVirtualKey, VirtualKeyPage } from '../auth/key-store.ts';
import type { VirtualKeyRecord } from '../auth/virtual-key-record.ts';
import { invalidRequest } from '../errors.ts';
import type { ToriiDatabase } from './database.ts';
import { decodeKeyListCursor, encodeKeyListCursor } from './key-list-cursor.ts';
import { postgresArrayLiteral } from './postgres-array-literal.ts';
import { virtualKeys } from './schema.ts';
import { virtualKeyColumnsOf as columnsOf, virtualKeyFromRow } from './virtual-key-row.ts';

/** Options of {@link createDrizzleKeyStore}. */
export interface DrizzleKeyStoreOptions {
  /** Wall clock in epoch ms for `createdAt`, `updatedAt` and `revokedAt`. Defaults to `Date.now`. */
  now?: () => number;
}

type VirtualKeyValues = Partial<typeof virtualKeys.$inferInsert>;

/**
 * The {@link KeyStore} over Postgres through Drizzle, for any driver. Every change is one `UPDATE ... RETURNING` that
 * bumps `version` in the database (`version = version + 1`), so concurrent admins never both write the same version.
 * `list` pages newest first by `(created_at, id)` with an opaque cursor, served by the `(created_at, id)` indexes.
 *
 * @example
 * ```ts
 * const store = createDrizzleKeyStore(database.db);
 * const key = await store.create({ id: 'key_1', hash: await sha256Hex(secret), prefix: 'sk-torii-AbCd', name: 'ci' });
 * await store.revoke(key.id); // version 2; revoking again changes nothing
 * ```
 */
export function createDrizzleKeyStore(db: ToriiDatabase, options: DrizzleKeyStoreOptions = {}): KeyStore {
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

    // The hashes go as one array parameter, so the statement is the same for any number of them.
    async findManyByHash(hashes) {
      if (hashes.length === 0) return [];
      const rows = await db
        .select()
        .from(virtualKeys)
        .where(sql`${virtualKeys.keyHash} = any(${postgresArrayLiteral([...new Set(hashes)])}::text[])`);
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
        const createdAt = new Date(after.createdAt).toISOString();
        conditions.push(sql`(${virtualKeys.createdAt}, ${virtualKeys.id}) < (${createdAt}::timestamptz, ${after.id})`);
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
