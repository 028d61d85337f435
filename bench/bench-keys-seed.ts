import { createHash } from 'node:crypto';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import postgres from 'postgres';
import { generateVirtualKeyId, generateVirtualKeySecret } from '../src/auth/virtual-key-secret.ts';

/**
 * Seeds the bench database with many virtual keys for `pnpm bench:keys`, fast: batches of 50,000 rows, each one
 * `insert ... select ... from unnest(...)` with five array parameters, while the next batch is generated. Secrets have
 * the real format (`generateVirtualKeySecret`: `sk-torii-`, 37 base62 characters, CRC-32 checksum) and rows hold what
 * the admin API stores (`drizzle-key-store.ts`): the SHA-256 of the secret in lowercase hex, the visible prefix, a
 * `key_` id, version 1, `{}` metadata, so the gateway authenticates them through its normal lookup. Every
 * `total / loadKeys`-th key is a load key (its secret is kept, generous RPM/TPM limits, a monthly budget only when
 * `loadKeyBudgetUsd` is given); the others have
 * no limits and exist so that the table and its hash index are realistically large. Afterwards `VACUUM (ANALYZE)`
 * sets the visibility and statistics a long-lived table would have, so no autovacuum runs during the measurement.
 */

/** What {@link seedVirtualKeys} made. */
export interface SeededKeys {
  /** Secrets of the load keys, in insertion order, and their SHA-256 (lowercase hex, as stored). */
  loadSecrets: string[];
  loadHashes: string[];
  /** A seeded key that is not a load key, to check that seeded keys authenticate without warming a load key. */
  checkSecret: string;
  /** Rows inserted. */
  total: number;
  insertSeconds: number;
  vacuumSeconds: number;
  /** `pg_total_relation_size('virtual_keys')` afterwards (table, TOAST and indexes), bytes. */
  tableBytes: number;
}

/** The limits every load key gets: far above what the bench sends to one key, so nothing is refused. */
export const loadKeyLimits = { rpmLimit: 100_000, tpmLimit: 100_000_000 };

const batchSize = 50_000;

interface Batch {
  ids: string[];
  hashes: string[];
  prefixes: string[];
  names: string[];
  createdAt: number[];
  /** 1 for a load key (limits), 0 for a filler (postgres-js sends boolean arrays badly). */
  limited: number[];
}

/**
 * Inserts `total` keys into the `virtual_keys` table of `databaseUrl` (which must be migrated), `loadKeys` of them
 * load keys. `onProgress` hears after each batch.
 *
 * @example
 * const seeded = await seedVirtualKeys({ databaseUrl, total: 1_000_000, loadKeys: 10_000 });
 */
export async function seedVirtualKeys(options: {
  databaseUrl: string;
  total: number;
  loadKeys: number;
  /** A monthly budget for every load key (none when undefined). */
  loadKeyBudgetUsd?: number;
  /** Whether load keys get {@link loadKeyLimits} (default true); without, the limiter has nothing to do for them. */
  loadKeyLimits?: boolean;
  onProgress?: (inserted: number) => void;
}): Promise<SeededKeys> {
  const { total, loadKeys } = options;
  if (!(loadKeys >= 1 && loadKeys < total)) throw new Error(`need 1 <= load keys (${loadKeys}) < total (${total})`);
  const stride = Math.floor(total / loadKeys);
  const budgetUsd = options.loadKeyBudgetUsd ?? null;
  const budgetPeriod = budgetUsd === null ? null : 'month';
  const limits = options.loadKeyLimits ?? true;
  const rpmLimit = limits ? loadKeyLimits.rpmLimit : null;
  const tpmLimit = limits ? loadKeyLimits.tpmLimit : null;
  const loadSecrets: string[] = [];
  const loadHashes: string[] = [];
  let checkSecret: string | undefined;
  // Creation times spread over the last year, one millisecond apart per key, as if keys had been made over time.
  const firstCreatedAt = Date.now() - total - 365 * 24 * 3_600_000;

  const generate = async (start: number, count: number): Promise<Batch> => {
    const batch: Batch = { ids: [], hashes: [], prefixes: [], names: [], createdAt: [], limited: [] };
    for (let index = start; index < start + count; index++) {
      // Let the previous batch's insert stream out while this one is generated.
      if ((index - start) % 5_000 === 0) await yieldToEventLoop();
      const { secret, prefix } = generateVirtualKeySecret();
      const isLoadKey = index % stride === 0 && loadSecrets.length < loadKeys;
      const hash = createHash('sha256').update(secret).digest('hex');
      if (isLoadKey) {
        loadSecrets.push(secret);
        loadHashes.push(hash);
      } else checkSecret ??= secret;
      batch.ids.push(generateVirtualKeyId());
      batch.hashes.push(hash);
      batch.prefixes.push(prefix);
      batch.names.push(isLoadKey ? `bench load ${loadSecrets.length}` : `bench filler ${index}`);
      batch.createdAt.push(firstCreatedAt + index);
      batch.limited.push(isLoadKey ? 1 : 0);
    }
    return batch;
  };

  const sql = postgres(options.databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const insertStarted = performance.now();
    let next: Promise<Batch> | undefined = generate(0, Math.min(batchSize, total));
    for (let start = 0; next !== undefined; start += batchSize) {
      const batch: Batch = await next;
      const insert = sql`
        insert into virtual_keys (id, key_hash, key_prefix, name, rpm_limit, tpm_limit, budget_usd, budget_period,
          created_at, updated_at)
        select id, hash, prefix, name,
          case when limited = 1 then ${rpmLimit}::integer end,
          case when limited = 1 then ${tpmLimit}::integer end,
          case when limited = 1 then ${budgetUsd}::float8 end,
          case when limited = 1 then ${budgetPeriod}::text end,
          to_timestamp(created_ms / 1000.0), to_timestamp(created_ms / 1000.0)
        from unnest(${batch.ids}::text[], ${batch.hashes}::text[], ${batch.prefixes}::text[], ${batch.names}::text[],
          ${batch.createdAt}::float8[], ${batch.limited}::integer[]) as rows(id, hash, prefix, name, created_ms, limited)`.execute();
      const following = start + batchSize;
      next = following < total ? generate(following, Math.min(batchSize, total - following)) : undefined;
      await insert;
      options.onProgress?.(Math.min(following, total));
    }
    const insertSeconds = (performance.now() - insertStarted) / 1_000;
    const vacuumStarted = performance.now();
    await sql.unsafe('vacuum (analyze) virtual_keys');
    const vacuumSeconds = (performance.now() - vacuumStarted) / 1_000;
    const [size] = await sql<{ bytes: string }[]>`select pg_total_relation_size('virtual_keys')::text as bytes`;
    if (loadSecrets.length !== loadKeys || checkSecret === undefined) {
      throw new Error(`seeded ${loadSecrets.length} load keys of ${loadKeys}`);
    }
    return {
      loadSecrets,
      loadHashes,
      checkSecret,
      total,
      insertSeconds,
      vacuumSeconds,
      tableBytes: Number(size?.bytes ?? 0),
    };
  } finally {
    await sql.end({ timeout: 1 });
  }
}
