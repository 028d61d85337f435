import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invalidRequest } from '../../src/errors.ts';
import { guardDatabaseMethods, redactDatabaseError } from './database-errors.ts';

describe('redactDatabaseError', () => {
  let client: PGlite;

  beforeAll(async () => {
    client = await PGlite.create();
    await client.exec('create table keys (id text primary key, metadata jsonb not null, owner uuid)');
  }, 60_000);

  afterAll(async () => {
    await client.close();
  });

  const marker = 'MARKER-7f3a-secret-hash';

  it('drops the parameters of a real failing query, keeping the SQLSTATE and the reason', async () => {
    const db = drizzle({ client });
    const store = guardDatabaseMethods({
      insert: async (metadata: Record<string, string>) =>
        db.execute(sql`insert into missing_table (metadata) values (${JSON.stringify(metadata)})`),
      badUuid: async (owner: string) => db.execute(sql`select * from keys where owner = ${owner}`),
    });
    const failure = (promise: Promise<unknown>) =>
      promise.then(
        () => new Error('expected the query to fail'),
        (error: unknown) => error as Error,
      );
    const missing = await failure(store.insert({ customer: marker }));
    expect(missing.message).toBe('database error 42P01: relation "missing_table" does not exist');
    const invalid = await failure(store.badUuid(marker));
    expect(invalid.message).toMatch(/^database error 22P02: invalid input syntax for type uuid: "…"$/);
    for (const error of [missing, invalid]) {
      expect(error.message).not.toContain(marker);
      expect(JSON.stringify(error)).not.toContain(marker);
      expect(String(error.stack)).not.toContain(marker);
      expect(error.cause).toBeUndefined();
    }
  });

  it("lets a store's own refusal of its input through as the GatewayError it is", async () => {
    const refusal = invalidRequest('The cursor is not one this API returned.', 'cursor', 'invalid_cursor');
    const store = guardDatabaseMethods({
      list: async () => {
        throw refusal;
      },
    });
    await expect(store.list()).rejects.toBe(refusal);
  });

  it('keeps a system error, drops a bare Drizzle wrapper', () => {
    const refused = redactDatabaseError(
      Object.assign(new Error('Failed query: select 1\nparams: secret'), {
        cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      }),
    );
    expect(refused.message).toBe('database unavailable: connect ECONNREFUSED 127.0.0.1:5432');
    expect(redactDatabaseError(new Error(`Failed query: select $1\nparams: ${marker}`)).message).toBe(
      'database query failed',
    );
  });
});
