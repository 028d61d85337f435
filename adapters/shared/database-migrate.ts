import type { PGlite } from '@electric-sql/pglite';
import { importOptionalPackage } from './optional-package.ts';

/** postgres-js with Drizzle's driver and migrator for it, loaded on first use (optional peers of the package). */
export async function loadPostgresDriver() {
  const [client, driver, migrator] = await Promise.all([
    importOptionalPackage('postgres', 'DATABASE_URL', 'Postgres', () => import('postgres')),
    importOptionalPackage('drizzle-orm', 'DATABASE_URL', 'Postgres', () => import('drizzle-orm/postgres-js')),
    importOptionalPackage('drizzle-orm', 'DATABASE_URL', 'Postgres', () => import('drizzle-orm/postgres-js/migrator')),
  ]);
  return { postgres: client.default, drizzle: driver.drizzle, migrate: migrator.migrate };
}

/** PGlite with Drizzle's driver and migrator for it, loaded on first use (optional peers of the package). */
export async function loadPgliteDriver() {
  const [engine, driver, migrator] = await Promise.all([
    importOptionalPackage(
      '@electric-sql/pglite',
      'TORII_DATABASE',
      'The embedded PGlite database',
      () => import('@electric-sql/pglite'),
    ),
    importOptionalPackage(
      'drizzle-orm',
      'TORII_DATABASE',
      'The embedded PGlite database',
      () => import('drizzle-orm/pglite'),
    ),
    importOptionalPackage(
      'drizzle-orm',
      'TORII_DATABASE',
      'The embedded PGlite database',
      () => import('drizzle-orm/pglite/migrator'),
    ),
  ]);
  return { PGlite: engine.PGlite, drizzle: driver.drizzle, migrate: migrator.migrate };
}

/**
 * The `pg_advisory_lock` key that serialises migrations across processes and hosts sharing one database (an
 * arbitrary constant; it only has to differ from other applications' lock keys in the same database).
 */
export const migrationLockKey = 7_354_921_108_442_017n;

/**
 * Applies the pending migrations of `migrationsFolder` to the Postgres at `url`, safely when many processes start at
 * once (cluster workers, replicas during a rolling deploy): on a dedicated connection it takes a session-level
 * `pg_advisory_lock`, runs Drizzle's migrator (which applies only the migrations newer than the last recorded one,
 * in one transaction), then unlocks. Drizzle's migrator alone is not safe concurrently: two processes would both
 * see the table missing and both run `CREATE TABLE`. Waiting processes find everything applied and do nothing.
 */
export async function migratePostgres(url: string, migrationsFolder: string): Promise<void> {
  const { postgres, drizzle, migrate } = await loadPostgresDriver();
  // One connection: the advisory lock belongs to the session, so the lock, the migration and the unlock must share it.
  const client = postgres(url, {
    max: 1,
    connect_timeout: 10,
    onnotice: () => {},
    connection: { application_name: 'torii-migrate' },
  });
  try {
    await client`select pg_advisory_lock(${migrationLockKey.toString()}::bigint)`;
    try {
      await migrate(drizzle({ client }), { migrationsFolder });
    } finally {
      await client`select pg_advisory_unlock(${migrationLockKey.toString()}::bigint)`;
    }
  } finally {
    await client.end({ timeout: 5 });
  }
}

/**
 * Applies the pending migrations to a PGlite database. No lock: only one process may open a PGlite directory at all
 * (PGlite is Postgres in this process's memory, writing its files without coordinating with anyone), which is why
 * the cluster primary owns it.
 */
export async function migratePglite(client: PGlite, migrationsFolder: string): Promise<void> {
  const { drizzle, migrate } = await loadPgliteDriver();
  await migrate(drizzle({ client }), { migrationsFolder });
}
