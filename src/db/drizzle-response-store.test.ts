import { sql } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { describeResponseStoreConformance } from '../../tests/conformance/response-store-suite.ts';
import { testStoreDrivers, type TestStores } from '../../tests/services/test-database.ts';
import type { ResponseStore, StoredResponse } from '../responses/response-store.ts';
import type { ToriiDatabase } from './database.ts';
import { createDrizzleResponseStore, type DrizzleResponseStoreOptions } from './drizzle-response-store.ts';
import { createSqliteResponseStore } from './sqlite-response-store.ts';

for (const { driver, create } of testStoreDrivers) {
  describeResponseStoreConformance(driver === 'sqlite' ? 'sqlite' : `drizzle on ${driver}`, async () => {
    const stores = await create();
    return {
      createStore: (now) => stores.responseStore({ now }),
      close: () => stores.drop(),
    };
  });
}

const start = Date.UTC(2026, 2, 1, 12, 0, 0, 0);
const day = 86_400_000;

function stored(id: string, overrides: Partial<StoredResponse> = {}): StoredResponse {
  return {
    id,
    keyId: 'key_a',
    modelGroup: 'fast',
    deploymentId: 'fast/0',
    native: false,
    previousResponseId: null,
    inputItems: [{ type: 'message', role: 'user', content: 'hello' }],
    response: { id, object: 'response', output: [] },
    createdAt: start,
    expiresAt: start + day,
    ...overrides,
  };
}

/**
 * The store over the same database with every statement it runs recorded: through the driver's own client with a
 * logger (Postgres), or through the executor (SQLite).
 */
function recording(
  database: TestStores['database'],
  options: DrizzleResponseStoreOptions,
): { store: ResponseStore; statements(): string[] } {
  const statements: string[] = [];
  if (database.kind === 'sqlite') {
    const recorded = database.recording();
    const store = createSqliteResponseStore(recorded.db, options);
    return { store, statements: () => recorded.statements.map((statement) => statement.sql) };
  }
  const logger = { logQuery: (query: string) => void statements.push(query) };
  const client = (database.db as unknown as { $client: never }).$client;
  const recorded = database.kind === 'pglite' ? drizzlePglite({ client, logger }) : drizzlePostgres({ client, logger });
  return {
    store: createDrizzleResponseStore(recorded as unknown as ToriiDatabase, options),
    statements: () => statements,
  };
}

/** How many rows `stored_responses` holds, expired ones included. */
async function rowCount(database: TestStores['database'], idPrefix: string): Promise<number> {
  const pattern = `${idPrefix}%`;
  if (database.kind === 'sqlite') {
    const [row] = await database.db.values<[number]>(
      sql`select count(*) from "stored_responses" where "id" like ${pattern}`,
    );
    return Number(row?.[0]);
  }
  const result = await database.db.execute(
    sql`select count(*)::int as "count" from "stored_responses" where "id" like ${pattern}`,
  );
  const rows = Array.isArray(result) ? result : (result as unknown as { rows: { count: number }[] }).rows;
  return Number((rows[0] as { count: number }).count);
}

/** A Drizzle database whose `delete` throws, everything else passed through. */
function refusingDelete<Database extends object>(db: Database): Database {
  return new Proxy(db, {
    get(target, property) {
      if (property === 'delete')
        return () => {
          throw new Error('sweep refused');
        };
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
}

// The ResponseStore cases beyond the conformance suite, on the Drizzle store over Postgres and PGlite and the SQLite
// store (./sqlite-response-store.ts).
describe.each(testStoreDrivers)('response store on $driver', ({ driver, create }) => {
  let stores: TestStores;
  let database: TestStores['database'];
  let clock = start;
  const now = () => clock;
  let prefix = '';
  const id = (name: string) => `${prefix}_${name}`;

  beforeAll(async () => {
    stores = await create();
    database = stores.database;
  }, 60_000);
  afterAll(() => stores?.drop());

  beforeEach(() => {
    clock = start;
    prefix = `resp_${crypto.randomUUID().replaceAll('-', '')}`;
  });

  it('walks a chain of 200 in one statement', async () => {
    const store = stores.responseStore({ now });
    for (let index = 0; index < 200; index++)
      await store.put(stored(id(`${index}`), { previousResponseId: index === 0 ? null : id(`${index - 1}`) }));
    const recorded = recording(database, { now });
    const chain = await recorded.store.chain(id('199'), 1_000);
    const statements = recorded.statements();
    expect(chain).toHaveLength(200);
    expect(chain.at(-1)?.id).toBe(id('0'));
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/^select .* with recursive/s);
  }, 60_000);

  it('answers an empty chain for a maxLength that is not a positive number, and the whole chain for Infinity', async () => {
    const store = stores.responseStore({ now });
    await store.put(stored(id('a')));
    await store.put(stored(id('b'), { previousResponseId: id('a') }));
    expect(await store.chain(id('b'), Number.NaN)).toEqual([]);
    expect(await store.chain(id('b'), -1)).toEqual([]);
    expect((await store.chain(id('b'), 1.9)).map((response) => response.id)).toEqual([id('b')]);
    expect((await store.chain(id('b'), Number.POSITIVE_INFINITY)).map((response) => response.id)).toEqual([
      id('b'),
      id('a'),
    ]);
  });

  it('sweeps up to 1,000 expired rows on the puts chance picks, and keeps live ones', async () => {
    const quiet = stores.responseStore({ now, random: () => 0.5 });
    for (let index = 0; index < 5; index++)
      await quiet.put(stored(id(`expired${index}`), { expiresAt: start + 1_000 + index }));
    await quiet.put(stored(id('live')));
    clock = start + 10_000;
    await quiet.put(stored(id('unswept')));
    expect(await rowCount(database, prefix)).toBe(7);
    const sweeping = stores.responseStore({ now, random: () => 0 });
    await sweeping.put(stored(id('sweeper')));
    expect(await rowCount(database, prefix)).toBe(3);
    expect(await sweeping.get(id('live'))).toEqual(stored(id('live')));
  });

  it('succeeds a put whose sweep fails', async () => {
    const options = { now, random: () => 0 };
    const store =
      database.kind === 'sqlite'
        ? createSqliteResponseStore(refusingDelete(database.db), options)
        : createDrizzleResponseStore(refusingDelete(database.db), options);
    await store.put(stored(id('kept')));
    expect(await store.get(id('kept'))).toEqual(stored(id('kept')));
  });

  it('deletes an expired row it is asked to delete, answering false', async () => {
    const store = stores.responseStore({ now, random: () => 1 });
    await store.put(stored(id('old'), { expiresAt: start + 1_000 }));
    clock = start + 1_000;
    expect(await store.delete(id('old'))).toBe(false);
    clock = start;
    expect(await store.get(id('old'))).toBeUndefined();
    expect(await rowCount(database, prefix)).toBe(0);
  });

  // Postgres only: `jsonb` cannot hold U+0000 or a lone surrogate. SQLite keeps JSON as text, and stores them as they are.
  it('stores U+0000 and lone surrogates, which jsonb refuses, as U+FFFD, and everything else as it is', async () => {
    const store = stores.responseStore({ now });
    const awkward = 'nul \u0000 high \uD83D alone, low \uDE00 alone, pair \uD83D\uDE00, typed \\u0000 and \\ud83d';
    await store.put(stored(id('awkward'), { inputItems: [{ text: awkward }], response: { output: [awkward] } }));
    const expected =
      driver === 'sqlite'
        ? awkward
        : 'nul \uFFFD high \uFFFD alone, low \uFFFD alone, pair 😀, typed \\u0000 and \\ud83d';
    const read = await store.get(id('awkward'));
    expect(read?.inputItems).toEqual([{ text: expected }]);
    expect(read?.response).toEqual({ output: [expected] });
    const typed = 'only typed: \\u0000 \\uD800';
    await store.put(stored(id('typed'), { inputItems: [{ text: typed }] }));
    expect((await store.get(id('typed')))?.inputItems).toEqual([{ text: typed }]);
  });
});
