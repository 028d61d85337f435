import { sql } from 'drizzle-orm';
import type { ToriiDatabase } from '../../src/db/database.ts';

/** One drizzle-kit migration as bundled into the Worker (worker-migrations-bundled.ts). */
export interface BundledMigration {
  /** The file's name without `.sql` (`0000_initial`). */
  tag: string;
  /** The journal's `when`: drizzle records it as `created_at` and applies only migrations newer than the last. */
  folderMillis: number;
  breakpoints: boolean;
  /** The file's whole text; drizzle records its SHA-256 (hex) as `hash`. */
  sql: string;
}

/**
 * The advisory lock key of migrations: the same as the Node side's `migrationLockKey`
 * (adapters/shared/database-migrate.ts; a test keeps them equal), so Node processes and Worker isolates sharing one
 * database never migrate at the same time.
 */
export const workerMigrationLockKey = 7_354_921_108_442_017n;

/** drizzle's own bookkeeping table, as its Postgres migrator names and creates it. */
const migrationsTable = sql`"drizzle"."__drizzle_migrations"`;

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function rowsOf(result: unknown): Record<string, unknown>[] {
  if (Array.isArray(result)) return result as Record<string, unknown>[];
  const rows = (result as { rows?: unknown } | undefined)?.rows;
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
}

/** `created_at` of the newest applied migration; undefined when none (or the table does not exist yet). */
async function lastAppliedMillis(db: ToriiDatabase): Promise<number | undefined> {
  const [row] = rowsOf(
    await db.execute(sql`select created_at from ${migrationsTable} order by created_at desc limit 1`),
  );
  return row === undefined || row.created_at === null ? undefined : Number(row.created_at);
}

/**
 * Applies the bundled migrations that the database does not have yet, the way drizzle's Postgres migrator does and
 * into the same bookkeeping (`drizzle.__drizzle_migrations`: the SHA-256 of each file and its journal time), so
 * `drizzle-kit`, the Node server and every Worker isolate agree on what is applied.
 *
 * Safe with many isolates and Node processes starting at once: everything runs in ONE transaction that first takes
 * `pg_advisory_xact_lock` on the key the Node side locks with `pg_advisory_lock` (the two kinds exclude each other),
 * so one migrator works and the others wait, then find nothing to do. A transaction-level lock, unlike the Node side's
 * session lock, survives Hyperdrive's transaction-mode pooling, which may run consecutive statements outside a
 * transaction on different server connections. A failure rolls the whole transaction back.
 *
 * A quick check first (one `select`, no lock) skips all of it when the newest bundled migration is already applied.
 *
 * @example
 * ```ts
 * await migrateWorkerDatabase(db, bundledMigrations);
 * ```
 */
export async function migrateWorkerDatabase(
  db: ToriiDatabase,
  migrations: readonly BundledMigration[],
): Promise<{ applied: string[] }> {
  const newest = migrations.reduce((latest, migration) => Math.max(latest, migration.folderMillis), 0);
  const applied = await lastAppliedMillis(db).catch(() => undefined);
  if (applied !== undefined && applied >= newest) return { applied: [] };
  const hashes = await Promise.all(migrations.map((migration) => sha256Hex(migration.sql)));
  return await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${workerMigrationLockKey.toString()}::bigint)`);
    await tx.execute(sql`create schema if not exists "drizzle"`);
    await tx.execute(
      sql`create table if not exists ${migrationsTable} (id serial primary key, hash text not null, created_at bigint)`,
    );
    const last = await lastAppliedMillis(tx);
    const done: string[] = [];
    for (const [index, migration] of migrations.entries()) {
      if (last !== undefined && migration.folderMillis <= last) continue;
      for (const statement of migration.sql.split('--> statement-breakpoint')) {
        if (statement.trim() !== '') await tx.execute(sql.raw(statement));
      }
      await tx.execute(
        sql`insert into ${migrationsTable} ("hash", "created_at") values (${hashes[index]}, ${migration.folderMillis})`,
      );
      done.push(migration.tag);
    }
    return { applied: done };
  });
}
