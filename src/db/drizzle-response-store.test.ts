import { sql } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { describeResponseStoreConformance } from '../../tests/conformance/response-store-suite.ts';
import { testDatabaseDrivers, type TestDatabase } from '../../tests/services/test-database.ts';
import type { StoredResponse } from '../responses/response-store.ts';
import type { ToriiDatabase } from './database.ts';
import { createDrizzleResponseStore } from './drizzle-response-store.ts';

for (const { driver, create } of testDatabaseDrivers) {
  describeResponseStoreConformance(`drizzle on ${driver}`, async () => {
    const database = await create();
    return {
      createStore: (now) => createDrizzleResponseStore(database.db, { now }),
      close: () => database.drop(),
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

/** The same database with every statement it runs recorded, over the driver's own client. */
function recording(db: ToriiDatabase, driver: string): { db: ToriiDatabase; statements: string[] } {
  const statements: string[] = [];
  const logger = { logQuery: (query: string) => void statements.push(query) };
  const client = (db as unknown as { $client: never }).$client;
  const recorded = driver === 'pglite' ? drizzlePglite({ client, logger }) : drizzlePostgres({ client, logger });
  return { db: recorded as unknown as ToriiDatabase, statements };
}

/** How many rows `stored_responses` holds, expired ones included. */
async function rowCount(db: ToriiDatabase, idPrefix: string): Promise<number> {
  const result = await db.execute(
    sql`select count(*)::int as "count" from "stored_responses" where "id" like ${`${idPrefix}%`}`,
  );
  const rows = Array.isArray(result) ? result : (result as unknown as { rows: { count: number }[] }).rows;
  return Number((rows[0] as { count: number }).count);
}

describe.each(testDatabaseDrivers)('createDrizzleResponseStore on $driver', ({ driver, create }) => {
  let database: TestDatabase;
  let clock = start;
  const now = () => clock;
  let prefix = '';
  const id = (name: string) => `${prefix}_${name}`;

  beforeAll(async () => {
    database = await create();
  }, 60_000);
  afterAll(() => database?.drop());

  beforeEach(() => {
    clock = start;
    prefix = `resp_${crypto.randomUUID().replaceAll('-', '')}`;
  });

  it('walks a chain of 200 in one statement', async () => {
    const store = createDrizzleResponseStore(database.db, { now });
    for (let index = 0; index < 200; index++)
      await store.put(stored(id(`${index}`), { previousResponseId: index === 0 ? null : id(`${index - 1}`) }));
    const { db, statements } = recording(database.db, driver);
    const chain = await createDrizzleResponseStore(db, { now }).chain(id('199'), 1_000);
    expect(chain).toHaveLength(200);
    expect(chain.at(-1)?.id).toBe(id('0'));
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/^select .* with recursive/s);
  }, 60_000);

  it('answers an empty chain for a maxLength that is not a positive number, and the whole chain for Infinity', async () => {
    const store = createDrizzleResponseStore(database.db, { now });
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
    const quiet = createDrizzleResponseStore(database.db, { now, random: () => 0.5 });
    for (let index = 0; index < 5; index++)
      await quiet.put(stored(id(`expired${index}`), { expiresAt: start + 1_000 + index }));
    await quiet.put(stored(id('live')));
    clock = start + 10_000;
    await quiet.put(stored(id('unswept')));
    expect(await rowCount(database.db, prefix)).toBe(7);
    const sweeping = createDrizzleResponseStore(database.db, { now, random: () => 0 });
    await sweeping.put(stored(id('sweeper')));
    expect(await rowCount(database.db, prefix)).toBe(3);
    expect(await sweeping.get(id('live'))).toEqual(stored(id('live')));
  });

  it('succeeds a put whose sweep fails', async () => {
    const failingDelete = new Proxy(database.db, {
      get(target, property) {
        if (property === 'delete')
          return () => {
            throw new Error('sweep refused');
          };
        const value: unknown = Reflect.get(target, property);
        return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
      },
    });
    const store = createDrizzleResponseStore(failingDelete, { now, random: () => 0 });
    await store.put(stored(id('kept')));
    expect(await store.get(id('kept'))).toEqual(stored(id('kept')));
  });

  it('deletes an expired row it is asked to delete, answering false', async () => {
    const store = createDrizzleResponseStore(database.db, { now, random: () => 1 });
    await store.put(stored(id('old'), { expiresAt: start + 1_000 }));
    clock = start + 1_000;
    expect(await store.delete(id('old'))).toBe(false);
    clock = start;
    expect(await store.get(id('old'))).toBeUndefined();
    expect(await rowCount(database.db, prefix)).toBe(0);
  });

  it('stores U+0000 and lone surrogates, which jsonb refuses, as U+FFFD, and everything else as it is', async () => {
    const store = createDrizzleResponseStore(database.db, { now });
    const awkward = 'nul \u0000 high \uD83D alone, low \uDE00 alone, pair \uD83D\uDE00, typed \\u0000 and \\ud83d';
    await store.put(stored(id('awkward'), { inputItems: [{ text: awkward }], response: { output: [awkward] } }));
    const expected = 'nul \uFFFD high \uFFFD alone, low \uFFFD alone, pair 😀, typed \\u0000 and \\ud83d';
    const read = await store.get(id('awkward'));
    expect(read?.inputItems).toEqual([{ text: expected }]);
    expect(read?.response).toEqual({ output: [expected] });
    const typed = 'only typed: \\u0000 \\uD800';
    await store.put(stored(id('typed'), { inputItems: [{ text: typed }] }));
    expect((await store.get(id('typed')))?.inputItems).toEqual([{ text: typed }]);
  });
});
