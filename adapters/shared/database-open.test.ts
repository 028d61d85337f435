import { sql } from 'drizzle-orm';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { createDrizzleKeyStore } from '../../src/db/drizzle-key-store.ts';
import { createEmptyTestDatabase } from '../../tests/services/test-database.ts';
import { openPostgresDatabase } from './database-open.ts';

/** How many migrations src/db/migrations holds (its drizzle journal). */
const migrationCount = (
  JSON.parse(readFileSync(new URL('../../src/db/migrations/meta/_journal.json', import.meta.url), 'utf8')) as {
    entries: unknown[];
  }
).entries.length;

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** Connections the pool of `url`'s database holds now, by application name. */
async function connectionsOf(url: string, applicationName: string): Promise<number> {
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await client`select count(*)::int as count from pg_stat_activity
      where datname = current_database() and application_name = ${applicationName}`;
    return row!.count as number;
  } finally {
    await client.end({ timeout: 5 });
  }
}

describe('openPostgresDatabase with DATABASE_URL', () => {
  it('opens postgres-js, migrated and usable', async () => {
    const empty = await createEmptyTestDatabase();
    cleanups.push(empty.drop);
    const database = await openPostgresDatabase({ DATABASE_URL: empty.url });
    cleanups.push(database.close);
    expect(database.kind).toBe('postgres');
    const store = createDrizzleKeyStore(database.db);
    const key = await store.create({ id: 'key_open', hash: 'a'.repeat(64), prefix: 'sk-torii-open', name: 'open' });
    expect(await store.findByHash('a'.repeat(64))).toEqual(key);
  });

  it('keeps at most TORII_DATABASE_POOL_MAX connections (default 4)', async () => {
    const empty = await createEmptyTestDatabase();
    cleanups.push(empty.drop);
    for (const [setting, expected] of [
      [undefined, 4],
      ['2', 2],
    ] as const) {
      const database = await openPostgresDatabase({ DATABASE_URL: empty.url, TORII_DATABASE_POOL_MAX: setting });
      await Promise.all(Array.from({ length: 12 }, () => database.db.execute(sql`select pg_sleep(0.05)`)));
      expect(await connectionsOf(empty.url, 'torii')).toBe(expected);
      await database.close();
    }
    await expect(openPostgresDatabase({ DATABASE_URL: empty.url, TORII_DATABASE_POOL_MAX: '0' })).rejects.toThrow(
      /TORII_DATABASE_POOL_MAX/,
    );
  });

  it('leaves the schema alone with migrate: false', async () => {
    const empty = await createEmptyTestDatabase();
    cleanups.push(empty.drop);
    const database = await openPostgresDatabase({ DATABASE_URL: empty.url }, { migrate: false });
    cleanups.push(database.close);
    const client = postgres(empty.url, { max: 1 });
    const tables = await client`select tablename from pg_tables where schemaname = 'public'`;
    await client.end();
    expect(tables).toHaveLength(0);
  });
});

describe('openPostgresDatabase without DATABASE_URL (TORII_DATABASE=pglite)', () => {
  it('opens PGlite in <TORII_DATA_DIR>/pglite, migrated, and keeps data across restarts', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'torii-open-pglite-'));
    cleanups.push(() => rm(directory, { recursive: true, force: true }));

    const first = await openPostgresDatabase({ TORII_DATA_DIR: directory });
    expect(first.kind).toBe('pglite');
    expect(existsSync(join(directory, 'pglite', 'PG_VERSION'))).toBe(true);
    const created = await createDrizzleKeyStore(first.db).create({
      id: 'key_disk',
      hash: 'b'.repeat(64),
      prefix: 'sk-torii-disk',
      name: 'on disk',
    });
    await first.close();

    const second = await openPostgresDatabase({ TORII_DATA_DIR: directory });
    try {
      expect(await createDrizzleKeyStore(second.db).findById('key_disk')).toEqual(created);
      const applied = await second.db.execute(sql`select count(*)::int as count from drizzle.__drizzle_migrations`);
      // Every migration of src/db/migrations applied once, none twice across the restart.
      expect((applied as unknown as { rows: Array<{ count: number }> }).rows).toEqual([{ count: migrationCount }]);
    } finally {
      await second.close();
    }
  }, 60_000);
});
