// The declaration of workerd's `cloudflare:workers` module, referenced so that every program compiling this file has it
// (the package build's tsconfig.build.json lists entry files, not folders). An ambient module declaration cannot be
// imported, so a path reference is the only way.
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./cloudflare-workers-module.d.ts" />
import { DurableObject, type DurableObjectState } from 'cloudflare:workers';
import type { LimitLease, LimitStore } from '../../src/limits/limit-store.ts';
import { createMemoryLimitStore } from '../../src/limits/memory-limit-store.ts';
import type { KeyCountersObject, KeyCountersSpendCounter, KeyCountersWindow } from './durable-object-limit-store.ts';

/** One spend counter as stored. */
type SpendRow = { usd: number; expires_at: number };

/**
 * The Durable Object that holds one key's shared counters (one object per key, named `key:<keyId>` by the stores in
 * durable-object-limit-store.ts and durable-object-spend-counters.ts):
 *
 * - **Rate-limit windows**, in memory: a `createMemoryLimitStore()`, so the semantics are exactly the `LimitStore`
 *   seam's (lease with limit and minimum, release never below zero, add without limit, a window forgotten once a
 *   later one is named). A window lives for one window length, so it is not worth a storage write: an object evicted
 *   mid-window (idle for a while, a deploy, a crash) starts that window again from zero.
 * - **Budget spend counters**, in the object's SQLite storage (`torii_spend`), so eviction loses no spend. Each row
 *   expires `ttlSeconds` after its last write: reads ignore an expired row, a write restarts it from zero, and an
 *   alarm set for the earliest expiry deletes expired rows (so an object whose key went quiet empties itself).
 *
 * A Durable Object runs one event at a time and every method here finishes its counting without awaiting anything
 * (the SQL API is synchronous), so each call is atomic: no two leases ever see the same remainder.
 *
 * The class must be created with a `new_sqlite_classes` migration (SQLite-backed storage, the only kind on the free
 * plan and the one Cloudflare recommends); the SQL API does not exist on key-value-backed objects.
 *
 * @example
 * ```ts
 * // worker.ts: export the class beside the Worker's default export.
 * export { ToriiKeyCounters } from './key-counters-durable-object.ts';
 * // wrangler.toml:
 * // [[durable_objects.bindings]]
 * // name = "TORII_KEY_COUNTERS"
 * // class_name = "ToriiKeyCounters"
 * // [[migrations]]
 * // tag = "v1"
 * // new_sqlite_classes = ["ToriiKeyCounters"]
 * ```
 */
export class ToriiKeyCounters extends DurableObject implements KeyCountersObject {
  private readonly windows: LimitStore = createMemoryLimitStore();
  /** When the alarm that deletes expired spend rows is set for, as far as this instance knows. */
  private sweepAt: number | undefined;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    ctx.storage.sql.exec(
      'CREATE TABLE IF NOT EXISTS torii_spend (period TEXT PRIMARY KEY, usd REAL NOT NULL, expires_at INTEGER NOT NULL)',
    );
    ctx.storage.sql.exec('CREATE INDEX IF NOT EXISTS torii_spend_expires_at ON torii_spend (expires_at)');
  }

  /** See `LimitStore.lease`. Amounts are whole units: `amount` and `limit` round down, `minimum` up (at least 1). */
  lease(request: KeyCountersWindow & { amount: number; limit: number; minimum?: number }): Promise<LimitLease> {
    return this.windows.lease({
      counter: request.counter,
      windowStart: request.windowStart,
      windowMs: request.windowMs,
      amount: Math.max(0, Math.floor(request.amount)),
      limit: Math.floor(request.limit),
      minimum: Math.max(1, Math.ceil(request.minimum ?? 1)),
    });
  }

  /** See `LimitStore.release`. */
  async release(request: KeyCountersWindow & { amount: number }): Promise<void> {
    const amount = Math.floor(request.amount);
    if (amount > 0) await this.windows.release({ ...windowOf(request), amount });
  }

  /** See `LimitStore.add`. */
  async add(request: KeyCountersWindow & { amount: number }): Promise<void> {
    const amount = Math.ceil(request.amount);
    if (amount > 0) await this.windows.add({ ...windowOf(request), amount });
  }

  /** Adds to a spend counter in one statement (an expired row starts again from zero) and renews its TTL. */
  async addSpend(counter: KeyCountersSpendCounter, amountUsd: number): Promise<void> {
    if (!(amountUsd > 0) || !Number.isFinite(amountUsd)) return;
    const now = Date.now();
    const expiresAt = expiryOf(counter, now);
    this.ctx.storage.sql.exec(
      `INSERT INTO torii_spend (period, usd, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (period) DO UPDATE SET
         usd = CASE WHEN torii_spend.expires_at <= ? THEN excluded.usd ELSE torii_spend.usd + excluded.usd END,
         expires_at = excluded.expires_at`,
      counter.periodLabel,
      amountUsd,
      expiresAt,
      now,
    );
    await this.scheduleSweep(expiresAt);
  }

  /** A spend counter's total; 0 when it does not exist or has expired. */
  readSpend(counter: Pick<KeyCountersSpendCounter, 'periodLabel'>): Promise<number> {
    return Promise.resolve(this.currentSpend(counter.periodLabel, Date.now()));
  }

  /** Raises a spend counter to at least `ledgerUsd`, never lowering it; answers the total afterwards. */
  async raiseSpendTo(counter: KeyCountersSpendCounter, ledgerUsd: number): Promise<number> {
    const now = Date.now();
    const current = this.currentSpend(counter.periodLabel, now);
    if (!(ledgerUsd > current) || !Number.isFinite(ledgerUsd)) return current;
    const expiresAt = expiryOf(counter, now);
    this.ctx.storage.sql.exec(
      `INSERT INTO torii_spend (period, usd, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (period) DO UPDATE SET usd = excluded.usd, expires_at = excluded.expires_at`,
      counter.periodLabel,
      ledgerUsd,
      expiresAt,
    );
    await this.scheduleSweep(expiresAt);
    return ledgerUsd;
  }

  /** Deletes expired spend rows and sets the alarm for the next expiry, if any row is left. */
  override async alarm(): Promise<void> {
    this.ctx.storage.sql.exec('DELETE FROM torii_spend WHERE expires_at <= ?', Date.now());
    this.sweepAt = undefined;
    const next = this.earliestExpiry();
    if (next !== undefined) await this.scheduleSweep(next);
  }

  private currentSpend(periodLabel: string, now: number): number {
    const rows = this.ctx.storage.sql
      .exec<SpendRow>('SELECT usd, expires_at FROM torii_spend WHERE period = ?', periodLabel)
      .toArray();
    const row = rows[0];
    return row !== undefined && row.expires_at > now ? row.usd : 0;
  }

  private earliestExpiry(): number | undefined {
    const { earliest } = this.ctx.storage.sql
      .exec<{ earliest: number | null }>('SELECT min(expires_at) AS earliest FROM torii_spend')
      .one();
    return earliest ?? undefined;
  }

  /**
   * Makes sure the alarm fires by `expiresAt`. A fresh instance does not know the alarm set by the one before it, so
   * it sets the alarm once for the earliest expiry stored; after that only an earlier expiry moves it.
   */
  private async scheduleSweep(expiresAt: number): Promise<void> {
    if (this.sweepAt !== undefined && this.sweepAt <= expiresAt) return;
    const at = this.sweepAt === undefined ? Math.min(expiresAt, this.earliestExpiry() ?? expiresAt) : expiresAt;
    this.sweepAt = at;
    await this.ctx.storage.setAlarm(at);
  }
}

function windowOf({ counter, windowStart, windowMs }: KeyCountersWindow): KeyCountersWindow {
  return { counter, windowStart, windowMs };
}

/** When a counter written at `now` expires; a TTL that is not a positive number is the caller's bug. */
function expiryOf(counter: KeyCountersSpendCounter, now: number): number {
  if (!(counter.ttlSeconds > 0) || !Number.isFinite(counter.ttlSeconds)) {
    throw new RangeError(`Spend counter TTL must be a positive number of seconds, got ${counter.ttlSeconds}.`);
  }
  return now + Math.ceil(counter.ttlSeconds * 1000);
}
