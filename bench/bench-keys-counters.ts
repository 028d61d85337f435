import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { findPostgresBinaries } from '../tests/services/postgres-server.ts';
import { sharedKeyCacheKey } from '../src/auth/virtual-key-cache-entry.ts';
import { processTree, readCpuTicks, readOtherProcessTicks, readProcessTicks } from './bench-process.ts';
import { parseRedisCommandCalls, type KeyCounters } from './bench-keys-slices.ts';

/**
 * The observers of `pnpm bench:keys`: read, around every slice, Redis `INFO commandstats` and how many selects of a
 * key by hash the bench database ran. The selects come from `pg_stat_statements`, which counts every statement in
 * shared memory as it ends, so a slice's count is exact (the cumulative statistics views are flushed by each backend
 * at most once a second, and up to 10 s late by an idle one). Without the extension the count falls back to
 * `idx_scan` of `virtual_keys` in `pg_stat_user_tables` (the unique hash index is the only one a lookup uses), with
 * that delay.
 */

/** The server setting that loads `pg_stat_statements`, when this PostgreSQL installation has the library. */
export function statementStatisticsSettings(): Record<string, string> {
  let libraryDirectory = join(findPostgresBinaries(), '..', 'lib');
  try {
    libraryDirectory = execFileSync(join(findPostgresBinaries(), 'pg_config'), ['--pkglibdir'], {
      encoding: 'utf8',
    }).trim();
  } catch {
    // No pg_config beside the server: the Debian layout (<version>/bin and <version>/lib) is assumed.
  }
  return existsSync(join(libraryDirectory, 'pg_stat_statements.so'))
    ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.max': '1000' }
    : {};
}

/** Reads the counters; see {@link openKeyCounters}. */
export interface KeyCountersObserver {
  /** `pg_stat_statements` (exact per slice) or `idx_scan` (flushed up to a second late, 10 s when idle). */
  postgresSource: 'pg_stat_statements' | 'idx_scan';
  /** Reads every counter now; `toriiPid` is the process whose CPU time is read, the CPUs are torii's and the load's. */
  read(toriiPid: number, cpus: { target: number; load: number }): Promise<KeyCounters>;
  /** `FLUSHALL`: the shared key cache and the rate-limit counters are gone. */
  flushRedis(): Promise<void>;
  /** Which of these key hashes have no record in the shared key cache (indexes into `hashes`). */
  missingFromSharedCache(hashes: readonly string[]): Promise<number[]>;
  close(): Promise<void>;
}

/**
 * Opens the observer connections: Redis, and PostgreSQL in the `postgres` database (so its own statements are not
 * counted against the bench database), where it creates `pg_stat_statements` when the library is loaded.
 *
 * @example
 * const counters = await openKeyCounters({ databaseUrl: services.databaseUrl, redisUrl: services.redisUrl });
 * const before = await counters.read(torii.pid);
 */
export async function openKeyCounters(options: {
  databaseUrl: string;
  redisUrl: string;
}): Promise<KeyCountersObserver> {
  const databaseName = new URL(options.databaseUrl).pathname.slice(1);
  const administration = postgres(options.databaseUrl.replace(/\/[^/]+$/, '/postgres'), {
    max: 1,
    onnotice: () => {},
  });
  const redis = new Redis(options.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  let postgresSource: KeyCountersObserver['postgresSource'] = 'idx_scan';
  try {
    await administration.unsafe('create extension if not exists pg_stat_statements');
    await administration.unsafe('select count(*) from pg_stat_statements');
    postgresSource = 'pg_stat_statements';
  } catch {
    // Not loaded (the library is missing): count index scans instead.
  }
  // idx_scan lives in the bench database's own statistics views: only that source needs a connection there.
  const benchDatabase =
    postgresSource === 'idx_scan' ? postgres(options.databaseUrl, { max: 1, onnotice: () => {} }) : undefined;

  const readPostgres = async (): Promise<{ selects: number; blocksRead: number }> => {
    if (benchDatabase !== undefined) {
      const [row] = await benchDatabase<{ idx_scan: string | null }[]>`
        select idx_scan::text from pg_stat_user_tables where relname = 'virtual_keys'`;
      return { selects: Number(row?.idx_scan ?? 0), blocksRead: 0 };
    }
    // Drizzle's findByHash (`where "virtual_keys"."key_hash" = $1 limit $2`) and findManyByHash, the batched lookup
    // of keys missing from every cache (`where "virtual_keys"."key_hash" = any($1::text[])`): each call is one query.
    const [row] = await administration<{ selects: string; blocks_read: string }[]>`
      select coalesce(sum(calls), 0)::text as selects, coalesce(sum(shared_blks_read), 0)::text as blocks_read
      from pg_stat_statements
      where dbid = (select oid from pg_database where datname = ${databaseName})
        and query ilike 'select %from "virtual_keys" where "virtual_keys"."key_hash" = %'`;
    return { selects: Number(row?.selects ?? 0), blocksRead: Number(row?.blocks_read ?? 0) };
  };

  return {
    postgresSource,
    async read(toriiPid, cpus) {
      const [info, selects] = await Promise.all([redis.info('commandstats'), readPostgres()]);
      const { calls, failed } = parseRedisCommandCalls(info);
      const cpuTicks = readCpuTicks([cpus.target, cpus.load]);
      return {
        at: performance.now(),
        wallClock: Date.now(),
        redisCalls: calls,
        redisFailedCalls: failed,
        postgresKeySelects: selects.selects,
        postgresKeyBlocksRead: selects.blocksRead,
        toriiCpuTicks: readProcessTicks(processTree(toriiPid)),
        targetCpu: cpuTicks.get(cpus.target) ?? { busy: 0, total: 0 },
        loadCpu: cpuTicks.get(cpus.load) ?? { busy: 0, total: 0 },
        // Everything this process started (torii, wrk, the mock, PostgreSQL, Redis) is part of the benchmark.
        otherCpuTicks: readOtherProcessTicks(new Set(processTree(process.pid))),
      };
    },
    async flushRedis() {
      await redis.flushall();
    },
    async missingFromSharedCache(hashes) {
      // torii's Redis key cache has no prefix of its own (node-data-plane.ts): the entry is `torii:key:<hash>`.
      const pipeline = redis.pipeline();
      for (const hash of hashes) pipeline.exists(sharedKeyCacheKey(hash));
      const answers = (await pipeline.exec()) ?? [];
      return hashes.flatMap((_hash, index) => (answers[index]?.[1] === 1 ? [] : [index]));
    },
    async close() {
      redis.disconnect();
      await Promise.all([administration.end({ timeout: 1 }), benchDatabase?.end({ timeout: 1 })]);
    },
  };
}
