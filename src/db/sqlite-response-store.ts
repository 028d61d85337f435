import { and, eq, getTableColumns, gt, sql, type SQL } from 'drizzle-orm';
import type { ResponseStore, StoredResponse } from '../responses/response-store.ts';
import type { DrizzleResponseStoreOptions } from './drizzle-response-store.ts';
import type { ToriiSqliteDatabase } from './sqlite-database.ts';
import { sqliteStoredResponses as storedResponses } from './sqlite-schema.ts';

/** Options of {@link createSqliteResponseStore}: the same as the Postgres store's. */
export type SqliteResponseStoreOptions = DrizzleResponseStoreOptions;

/** The share of puts that also delete expired rows. */
const sweepChance = 1 / 100;
/** The most expired rows one sweep deletes, so a sweep is a short statement even after a long outage. */
const sweepLimit = 1_000;
/** The largest `maxLength` a chain takes (as the Postgres store's); any longer is the whole chain anyway. */
const longestChain = 2_147_483_647;

type StoredResponseRow = typeof storedResponses.$inferSelect;

function storedResponseFromRow(row: StoredResponseRow): StoredResponse {
  return {
    id: row.id,
    keyId: row.keyId,
    modelGroup: row.modelGroup,
    deploymentId: row.deploymentId,
    native: row.native,
    previousResponseId: row.previousResponseId,
    inputItems: row.inputItems,
    response: row.response,
    createdAt: row.createdAt.getTime(),
    expiresAt: row.expiresAt.getTime(),
  };
}

const columns = getTableColumns(storedResponses);

/** Every column but the key, set from the row the insert proposed (`excluded`), so a replace sends its JSON once. */
const replaceFromExcluded = Object.fromEntries(
  Object.entries(columns)
    .filter(([, column]) => !column.primary)
    .map(([field, column]) => [field, sql.raw(`excluded."${column.name}"`)]),
) as Partial<Record<keyof StoredResponseRow, SQL>>;

/**
 * The ids of a chain with their place in it (1 = the newest), as a derived table named `chain`: a recursive CTE
 * following `previous_response_id` from `id`, stopping at `maxLength` responses or at the first link that is missing
 * or expired (`expires_at` and `now` in epoch ms). Each step is a primary-key lookup.
 */
function chainIds(id: string, maxLength: number, now: number): SQL {
  return sql`(
    with recursive "chain"("id", "previous_response_id", "depth") as (
      select "id", "previous_response_id", 1 from "stored_responses"
      where "id" = ${id} and "expires_at" > ${now}
      union all
      select "link"."id", "link"."previous_response_id", "chain"."depth" + 1
      from "chain" join "stored_responses" as "link" on "link"."id" = "chain"."previous_response_id"
      where "chain"."depth" < ${maxLength} and "link"."expires_at" > ${now}
    )
    select "id", "depth" from "chain"
  ) as "chain"`;
}

/**
 * The {@link ResponseStore} over the embedded SQLite database, with the Postgres store's behaviour
 * (src/db/drizzle-response-store.ts): `put` one upsert (`on conflict (id) do update`), `get` and `delete` a
 * primary-key lookup, `chain` a recursive CTE joined back to the table (one statement for a conversation of 200
 * turns). Reads compare `expires_at` with this process's clock. About one `put` in 100 also deletes up to 1,000
 * expired rows, oldest first, awaited, its failure swallowed. (SQLite has one writer at a time, so the sweep needs
 * no `skip locked`.)
 *
 * JSON columns are JSON text: unlike `jsonb`, they keep U+0000 and lone surrogates as they are (`JSON.stringify`
 * escapes them, and `JSON.parse` restores them).
 *
 * @example
 * ```ts
 * const store = createSqliteResponseStore(database.db);
 * await store.put({ id: 'resp_1', keyId: null, modelGroup: 'fast', deploymentId: 'fast/0', native: false,
 *   previousResponseId: null, inputItems, response, createdAt: Date.now(), expiresAt: Date.now() + 86_400_000 });
 * const conversation = await store.chain('resp_1', 100); // newest first
 * ```
 */
export function createSqliteResponseStore(
  db: ToriiSqliteDatabase,
  options: SqliteResponseStoreOptions = {},
): ResponseStore {
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const alive = (at: number) => gt(storedResponses.expiresAt, new Date(at));

  const sweep = async (): Promise<void> => {
    const expired = sql`
      select "id" from "stored_responses" where "expires_at" <= ${now()} order by "expires_at" limit ${sweepLimit}`;
    await db.delete(storedResponses).where(sql`${storedResponses.id} in (${expired})`);
  };

  return {
    async put(response) {
      await db
        .insert(storedResponses)
        .values({
          id: response.id,
          keyId: response.keyId,
          modelGroup: response.modelGroup,
          deploymentId: response.deploymentId,
          native: response.native,
          previousResponseId: response.previousResponseId,
          inputItems: response.inputItems as Record<string, unknown>[],
          response: response.response,
          createdAt: new Date(response.createdAt),
          expiresAt: new Date(response.expiresAt),
        })
        .onConflictDoUpdate({ target: storedResponses.id, set: replaceFromExcluded });
      if (random() < sweepChance) await sweep().catch(() => {});
    },

    async get(id) {
      const [row] = await db
        .select()
        .from(storedResponses)
        .where(and(eq(storedResponses.id, id), alive(now())))
        .limit(1);
      return row === undefined ? undefined : storedResponseFromRow(row);
    },

    async chain(id, maxLength) {
      const length = Math.min(Math.floor(maxLength), longestChain);
      if (!(length >= 1)) return [];
      const rows = await db
        .select(columns)
        .from(storedResponses)
        .innerJoin(chainIds(id, length, now()), sql`"chain"."id" = ${storedResponses.id}`)
        .orderBy(sql`"chain"."depth"`);
      return rows.map(storedResponseFromRow);
    },

    async delete(id) {
      // An expired row is deleted too (it is garbage), but answers false: it no longer existed for the caller.
      const deleted = await db
        .delete(storedResponses)
        .where(eq(storedResponses.id, id))
        .returning({ expiresAt: storedResponses.expiresAt });
      return deleted.some((row) => row.expiresAt.getTime() > now());
    },
  };
}
