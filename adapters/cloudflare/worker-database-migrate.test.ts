import { readMigrationFiles } from 'drizzle-orm/migrator';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import type { ToriiDatabase } from '../../src/db/database.ts';
import { createEmptyTestDatabase } from '../../tests/services/test-database.ts';
import { migratePostgres, migrationLockKey } from '../shared/database-migrate.ts';
import { findMigrationsFolder } from '../shared/database-migrations-folder.ts';
import { migrateWorkerDatabase, workerMigrationLockKey } from './worker-database-migrate.ts';
import { bundledMigrations } from './worker-migrations-bundled.ts';

const folder = findMigrationsFolder({});

/** drizzle's own reading of the migrations folder: what its migrator records. */
const drizzleMigrations = readMigrationFiles({ migrationsFolder: folder });

/** Runs `work` on a Drizzle database over a connection of its own (as a Worker isolate has). */
async function withDatabase<Result>(url: string, work: (db: ToriiDatabase) => Promise<Result>) {
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await work(drizzle({ client }));
  } finally {
    await client.end({ timeout: 5 });
  }
}

/** The bookkeeping rows and public tables of a database. */
async function stateOf(url: string) {
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const migrations = await client`select hash, created_at::text from drizzle.__drizzle_migrations order by id`;
    const tables = await client`select tablename from pg_tables where schemaname = 'public' order by tablename`;
    return { migrations: [...migrations], tables: tables.map((row) => row.tablename as string) };
  } finally {
    await client.end({ timeout: 5 });
  }
}

const expectedState = {
  migrations: drizzleMigrations.map((migration) => ({
    hash: migration.hash,
    created_at: String(migration.folderMillis),
  })),
  tables: ['stored_responses', 'usage_events', 'virtual_keys'],
};

describe('the migrations bundled into the Worker', () => {
  it('are the drizzle-kit folder exactly (regenerate with `node adapters/cloudflare/worker-migrations-generate.ts`)', () => {
    expect(
      bundledMigrations.map((migration) => ({
        sql: migration.sql.split('--> statement-breakpoint'),
        folderMillis: migration.folderMillis,
        bps: migration.breakpoints,
      })),
    ).toEqual(drizzleMigrations.map(({ sql, folderMillis, bps }) => ({ sql, folderMillis, bps })));
  });

  it('take the same advisory lock as the Node side', () => {
    expect(workerMigrationLockKey).toBe(migrationLockKey);
  });
});

describe('migrateWorkerDatabase', () => {
  const drops: Array<() => Promise<void>> = [];
  afterAll(() => Promise.all(drops.map((drop) => drop())));

  it('migrates once when 6 isolates and 2 Node processes start on one fresh database at the same moment, recording what drizzle records', async () => {
    const database = await createEmptyTestDatabase();
    drops.push(database.drop);
    const results = await Promise.allSettled([
      ...Array.from({ length: 6 }, () =>
        withDatabase(database.url, (db) => migrateWorkerDatabase(db, bundledMigrations)),
      ),
      migratePostgres(database.url, folder),
      migratePostgres(database.url, folder),
    ]);
    expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
    const applied = results.flatMap((result) =>
      result.status === 'fulfilled' && result.value !== undefined ? result.value.applied : [],
    );
    // Exactly one migrator applied each migration (a Node one may have, then no isolate did).
    expect(applied.length).toBeLessThanOrEqual(bundledMigrations.length);
    expect(await stateOf(database.url)).toEqual(expectedState);
  }, 60_000);

  it('finds nothing to do on a database the Node side migrated, and the Node side none on one it migrated', async () => {
    const byNode = await createEmptyTestDatabase();
    const byWorker = await createEmptyTestDatabase();
    drops.push(byNode.drop, byWorker.drop);
    await migratePostgres(byNode.url, folder);
    expect(await withDatabase(byNode.url, (db) => migrateWorkerDatabase(db, bundledMigrations))).toEqual({
      applied: [],
    });
    expect(await withDatabase(byWorker.url, (db) => migrateWorkerDatabase(db, bundledMigrations))).toEqual({
      applied: bundledMigrations.map((migration) => migration.tag),
    });
    await migratePostgres(byWorker.url, folder);
    expect(await stateOf(byNode.url)).toEqual(expectedState);
    expect(await stateOf(byWorker.url)).toEqual(expectedState);
  });

  it('applies only what is newer than the last recorded migration, and rolls a failed one back whole', async () => {
    const database = await createEmptyTestDatabase();
    drops.push(database.drop);
    await withDatabase(database.url, (db) => migrateWorkerDatabase(db, bundledMigrations));
    const newest = Math.max(...bundledMigrations.map((migration) => migration.folderMillis));
    const next = {
      tag: '9999_next',
      folderMillis: newest + 1,
      breakpoints: true,
      sql: 'CREATE TABLE "worker_next" ("id" integer);\n--> statement-breakpoint\nCREATE INDEX "worker_next_idx" ON "worker_next" ("id");',
    };
    const broken = {
      ...next,
      tag: '9999_broken',
      sql: 'CREATE TABLE "worker_half" ("id" integer);\n--> statement-breakpoint\nSELECT no_such_function();',
    };
    await expect(
      withDatabase(database.url, (db) => migrateWorkerDatabase(db, [...bundledMigrations, broken])),
    ).rejects.toThrow(/no_such_function/);
    expect((await stateOf(database.url)).tables).not.toContain('worker_half');
    expect(await withDatabase(database.url, (db) => migrateWorkerDatabase(db, [...bundledMigrations, next]))).toEqual({
      applied: ['9999_next'],
    });
    const state = await stateOf(database.url);
    expect(state.tables).toContain('worker_next');
    expect(state.migrations.map((row) => row.created_at)).toEqual([
      ...expectedState.migrations.map((row) => row.created_at),
      String(next.folderMillis),
    ]);
  });
});
