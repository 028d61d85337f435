import { and, eq, getTableColumns, gt, sql, type SQL } from 'drizzle-orm';
import type { ResponseStore, StoredResponse } from '../responses/response-store.ts';
import type { ToriiDatabase } from './database.ts';
import { storedResponses } from './schema.ts';

/** Options of {@link createDrizzleResponseStore}. */
export interface DrizzleResponseStoreOptions {
  /** Wall clock in epoch ms, against which `expiresAt` is compared. Defaults to `Date.now`. */
  now?: () => number;
  /**
   * A number in [0, 1) per `put`, deciding whether that put also sweeps expired rows (below 1/100 it does). Defaults
   * to `Math.random`; tests pass `() => 0` (always) or `() => 1` (never).
   */
  random?: () => number;
}

/** The share of puts that also delete expired rows. */
const sweepChance = 1 / 100;
/** The most expired rows one sweep deletes, so a sweep is a short statement even after a long outage. */
const sweepLimit = 1_000;
/** The largest `maxLength` a chain takes (Postgres's `integer`); any longer is the whole chain anyway. */
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

/** What Postgres's `jsonb` refuses in a string: U+0000, and halves of surrogate pairs standing alone. */
const unstorableInJsonb = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** The escapes `JSON.stringify` writes for those (every other character it writes as itself or as `\n`, `\"` ...). */
const escapedUnstorable = /\\u(?:0000|d[89a-f])/i;

/**
 * `value` as JSON text that `jsonb` accepts. `jsonb` cannot hold U+0000 or a lone surrogate (the statement fails:
 * "unsupported Unicode escape sequence"), and an upstream may well send either in model output; they are stored as
 * U+FFFD instead, so one odd character never loses a conversation. The common case is one `JSON.stringify` and one
 * scan of its text; only text that has such an escape (or a literal `\u0000` typed by someone) is encoded again.
 */
function jsonbText(value: unknown): string {
  const text = JSON.stringify(value);
  if (!escapedUnstorable.test(text)) return text;
  return JSON.stringify(value, (_key, item: unknown) =>
    typeof item === 'string' ? item.replace(unstorableInJsonb, '\uFFFD') : item,
  );
}

const columns = getTableColumns(storedResponses);

/** Every column but the key, set from the row the insert proposed (`excluded`), so a replace sends its JSON once. */
const replaceFromExcluded = Object.fromEntries(
  Object.entries(columns)
    .filter(([, column]) => !column.primary)
    .map(([field, column]) => [field, sql.raw(`excluded."${column.name}"`)]),
) as Partial<Record<keyof StoredResponseRow, SQL>>;

/**
 * The ids of a chain, with their place in it (1 = the newest), as a derived table named `chain`: a recursive CTE that
 * follows `previous_response_id` from `id`, stopping at `maxLength` responses or at the first link that is missing
 * or expired. Each step is a primary-key lookup. A cycle (no writer makes one: ids are new for every response) would
 * repeat responses, but never run past `maxLength`.
 */
function chainIds(id: string, maxLength: number, now: string): SQL {
  return sql`(
    with recursive "chain"("id", "previous_response_id", "depth") as (
      select "id", "previous_response_id", 1 from "stored_responses"
      where "id" = ${id} and "expires_at" > ${now}::timestamptz
      union all
      select "link"."id", "link"."previous_response_id", "chain"."depth" + 1
      from "chain" join "stored_responses" as "link" on "link"."id" = "chain"."previous_response_id"
      where "chain"."depth" < ${maxLength}::integer and "link"."expires_at" > ${now}::timestamptz
    )
    select "id", "depth" from "chain"
  ) as "chain"`;
}

/**
 * The {@link ResponseStore} over Postgres through Drizzle, for any driver, in the `stored_responses` table. Every
 * method is one statement: `put` an upsert (`on conflict (id) do update`), `get` and `delete` a primary-key lookup,
 * `chain` a recursive CTE joined back to the table, so a conversation of 200 turns is one round trip. Reads compare
 * `expires_at` with `now()` of this process (the injected clock), not the database's, so tests can move time.
 *
 * Expired rows are deleted lazily: about one `put` in 100 (by chance, so the store keeps no state and works the same
 * when a Worker makes one per connection) then deletes up to 1,000 of them, oldest first. The sweep runs after the
 * upsert and on the same connection, and is awaited (a Worker ends its connection when the call returns, which
 * would cut a sweep left running); its failure is swallowed, so the put still succeeds, and a later put sweeps
 * again. It takes its rows with `for update skip locked`, so concurrent sweeps on other instances never wait on each
 * other or deadlock, they share the backlog.
 *
 * JSON columns take anything `JSON.stringify` encodes, except that U+0000 and lone surrogates, which `jsonb` cannot
 * hold, come back as U+FFFD.
 *
 * @example
 * ```ts
 * const store = createDrizzleResponseStore(database.db);
 * await store.put({ id: 'resp_1', keyId: null, modelGroup: 'fast', deploymentId: 'fast/0', native: false,
 *   previousResponseId: null, inputItems, response, createdAt: Date.now(), expiresAt: Date.now() + 86_400_000 });
 * const conversation = await store.chain('resp_1', 100); // newest first
 * ```
 */
export function createDrizzleResponseStore(
  db: ToriiDatabase,
  options: DrizzleResponseStoreOptions = {},
): ResponseStore {
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const alive = (at: number) => gt(storedResponses.expiresAt, new Date(at));

  const sweep = async (): Promise<void> => {
    const expired = sql`
      select "id" from "stored_responses" where "expires_at" <= ${new Date(now()).toISOString()}::timestamptz
      order by "expires_at" limit ${sweepLimit} for update skip locked`;
    await db.delete(storedResponses).where(sql`${storedResponses.id} in (${expired})`);
  };

  return {
    async put(response) {
      const row = {
        id: response.id,
        keyId: response.keyId,
        modelGroup: response.modelGroup,
        deploymentId: response.deploymentId,
        native: response.native,
        previousResponseId: response.previousResponseId,
        inputItems: sql`${jsonbText(response.inputItems)}::jsonb`,
        response: response.response === null ? null : sql`${jsonbText(response.response)}::jsonb`,
        createdAt: new Date(response.createdAt),
        expiresAt: new Date(response.expiresAt),
      };
      await db
        .insert(storedResponses)
        .values(row)
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
        .innerJoin(chainIds(id, length, new Date(now()).toISOString()), sql`"chain"."id" = ${storedResponses.id}`)
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
