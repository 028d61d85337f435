import type { KeyValueCache } from '../cache/key-value-cache.ts';

/** One shared spend counter: a key's spend since a period's start. */
export interface SpendCounterId {
  keyId: string;
  /** The period's label (`2025-06-01`, `total`); see budget-period.ts. */
  periodLabel: string;
  /** How long the counter lives after a write. */
  ttlSeconds: number;
}

/**
 * Shared spend counters, summed over every process. The tracker calls them only in the background, never per request,
 * and never two calls for the same counter at once.
 */
export interface BudgetSpendCounters {
  /** Adds spend this process recorded. */
  add(counter: SpendCounterId, amountUsd: number): Promise<void>;
  /** The counter's total over all processes. */
  read(counter: SpendCounterId): Promise<number>;
  /**
   * The totals of many counters (as {@link read} answers them, in the order given), in far fewer round trips than a
   * `read` each. Optional: the tracker falls back to `read` per counter. Rejects when any underlying call fails.
   */
  readMany?(counters: readonly SpendCounterId[]): Promise<number[]>;
  /**
   * Raises the counter to at least `ledgerUsd` (the ledger's sum, which may be ahead when a counter was lost or a
   * process died before pushing), never lowering it; answers the total afterwards.
   */
  raiseTo(counter: SpendCounterId, ledgerUsd: number): Promise<number>;
  /** Drops what this process keeps in memory for a counter it no longer uses (the shared total stays). */
  forget(counter: SpendCounterId): void;
}

/** What {@link createCacheSpendCounters} is made with. */
export interface CacheSpendCountersOptions {
  cache: KeyValueCache;
  /** Unique per process (and per restart): it names the slot this process owns. */
  processId: string;
  /** Most processes per counter (default 256); a process finding every slot taken writes to the base entry. */
  maxSlots?: number;
}

/** What a slot entry holds: the owning process and its cumulative spend. */
interface SlotValue {
  owner: string;
  usd: number;
}

/** Further slots read at once when a counter has more slots than it had at its last read. */
const slotReadAhead = 8;
/** Most keys per `getMany` call. */
const keysPerGetMany = 500;
/** Most `getMany` calls of one `readMany` in flight at once. */
const getManyConcurrency = 4;

/**
 * Spend counters over a {@link KeyValueCache}, which has no atomic increment. Each process owns one slot per counter,
 * `torii:spend:<keyId>:<period>:<n>` holding `{"owner","usd"}` with that process's cumulative spend: it claims the
 * lowest free slot with `setIfAbsent` and from then on is its only writer, so plain `set` loses no update. Because it
 * writes its cumulative amount, a slot lost from the cache is rewritten whole by its live owner's next push. A total
 * is `torii:spend:<keyId>:<period>:base` (what ledger reconciliation added) plus every slot, read from slot 0 up to
 * the first missing one.
 *
 * Cost: one `set` per push. A read asks for the base and slots 0 to `n` in one `getMany`, where `n` is the number of
 * slots the counter's last read found, at least 1 (so the last key asked for is normally missing and ends the scan);
 * only when it exists are further slots read, eight at a time. `readMany` puts many counters' keys together, 500 per
 * `getMany`, so refreshing N keys written by P processes costs about `N * (P + 2) / 500` cache calls (a cache without
 * `getMany` falls back to one `get` per key).
 *
 * Where it can be wrong, and what corrects it: a dead process's slot expiring early (cache eviction) hides its spend
 * and stops the scan at the gap; a slot that expired and was claimed by another process is written by two owners
 * until one restarts. Both under-count, and the periodic ledger reconciliation ({@link BudgetSpendCounters.raiseTo})
 * restores the total. A Redis `INCRBYFLOAT` or Durable Object implementation of {@link BudgetSpendCounters} needs
 * none of this.
 *
 * @example
 * ```ts
 * const counters = createCacheSpendCounters({ cache, processId: crypto.randomUUID() });
 * await counters.add({ keyId: 'key_1', periodLabel: '2025-06-01', ttlSeconds: 3600 }, 0.25);
 * ```
 */
export function createCacheSpendCounters(options: CacheSpendCountersOptions): BudgetSpendCounters {
  const { cache, processId } = options;
  const maxSlots = options.maxSlots ?? 256;
  /** This process's slot and cumulative spend, by counter prefix. */
  const owned = new Map<string, { slot: number | 'base'; usd: number }>();
  /** How many slots each counter's last read found, by counter prefix: how many the next read asks for at once. */
  const knownSlots = new Map<string, number>();

  const prefix = (counter: SpendCounterId) => `torii:spend:${counter.keyId}:${counter.periodLabel}`;

  /** Finds this process's slot (claiming the lowest free one) and what it holds already. */
  async function claimSlot(counter: SpendCounterId): Promise<{ slot: number | 'base'; usd: number }> {
    const claim = JSON.stringify({ owner: processId, usd: 0 } satisfies SlotValue);
    for (let slot = 0; slot < maxSlots; slot++) {
      const key = `${prefix(counter)}:${slot}`;
      if (await cache.setIfAbsent(key, claim, { ttlSeconds: counter.ttlSeconds })) return { slot, usd: 0 };
      const current = parseSlot(await cache.get(key));
      if (current?.owner === processId) return { slot, usd: current.usd };
    }
    return { slot: 'base', usd: 0 };
  }

  async function readBase(counter: SpendCounterId): Promise<number> {
    return parseAmount(await cache.get(`${prefix(counter)}:base`));
  }

  /** The values of `keys`, through `getMany` in chunks of {@link keysPerGetMany}, or one `get` each without it. */
  async function getValues(keys: readonly string[]): Promise<(string | undefined)[]> {
    const getMany = cache.getMany?.bind(cache);
    if (getMany === undefined) return Promise.all(keys.map((key) => cache.get(key)));
    const chunks: string[][] = [];
    for (let first = 0; first < keys.length; first += keysPerGetMany) {
      chunks.push(keys.slice(first, first + keysPerGetMany));
    }
    const values: (string | undefined)[][] = Array.from({ length: chunks.length });
    let next = 0;
    const worker = async () => {
      while (next < chunks.length) {
        const index = next++;
        values[index] = await getMany(chunks[index]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(getManyConcurrency, chunks.length) }, worker));
    return values.flat();
  }

  async function readMany(counterList: readonly SpendCounterId[]): Promise<number[]> {
    /** Per counter: the base still to read, the slots found so far, how many to ask for next (0 once done). */
    const scans = counterList.map((counter) => {
      const id = prefix(counter);
      // At least slots 0 and 1: a counter read before any process wrote it typically has one writer by the next read.
      const wanted = Math.min(Math.max(knownSlots.get(id) ?? 1, 1) + 1, maxSlots);
      return { id, total: 0, withBase: true, found: 0, wanted };
    });
    for (;;) {
      const round = scans.filter((scan) => scan.withBase || scan.wanted > 0);
      if (round.length === 0) break;
      const keys: string[] = [];
      for (const scan of round) {
        if (scan.withBase) keys.push(`${scan.id}:base`);
        for (let slot = scan.found; slot < scan.found + scan.wanted; slot++) keys.push(`${scan.id}:${slot}`);
      }
      const values = await getValues(keys);
      let position = 0;
      for (const scan of round) {
        if (scan.withBase) scan.total += parseAmount(values[position++]);
        scan.withBase = false;
        const asked = scan.wanted;
        let complete = true;
        for (let offset = 0; offset < asked; offset++) {
          const slot = parseSlot(values[position + offset]);
          if (slot === undefined) {
            complete = false;
            break;
          }
          scan.total += slot.usd;
          scan.found += 1;
        }
        position += asked;
        // Every slot asked for exists: there may be more (up to maxSlots).
        scan.wanted = complete ? Math.min(slotReadAhead, maxSlots - scan.found) : 0;
      }
    }
    for (const scan of scans) knownSlots.set(scan.id, scan.found);
    return scans.map((scan) => scan.total);
  }

  async function read(counter: SpendCounterId): Promise<number> {
    return (await readMany([counter]))[0]!;
  }

  async function addToBase(counter: SpendCounterId, amountUsd: number): Promise<void> {
    // Read-modify-write: racy between processes, used only past maxSlots and for reconciliation (which repeats).
    const base = await readBase(counter);
    await cache.set(`${prefix(counter)}:base`, JSON.stringify(base + amountUsd), { ttlSeconds: counter.ttlSeconds });
  }

  return {
    async add(counter, amountUsd) {
      const id = prefix(counter);
      let mine = owned.get(id);
      if (mine === undefined) {
        mine = await claimSlot(counter);
        owned.set(id, mine);
      }
      if (mine.slot === 'base') return addToBase(counter, amountUsd);
      const usd = mine.usd + amountUsd;
      const value: SlotValue = { owner: processId, usd };
      await cache.set(`${id}:${mine.slot}`, JSON.stringify(value), { ttlSeconds: counter.ttlSeconds });
      mine.usd = usd;
    },
    read,
    readMany,
    async raiseTo(counter, ledgerUsd) {
      const total = await read(counter);
      if (!(ledgerUsd > total)) return total;
      await addToBase(counter, ledgerUsd - total);
      return ledgerUsd;
    },
    forget(counter) {
      owned.delete(prefix(counter));
      knownSlots.delete(prefix(counter));
    },
  };
}

function parseSlot(value: string | undefined): SlotValue | undefined {
  if (value === undefined) return undefined;
  try {
    const parsed = JSON.parse(value) as Partial<SlotValue>;
    return { owner: String(parsed.owner), usd: finiteOrZero(parsed.usd) };
  } catch {
    return { owner: '', usd: 0 };
  }
}

function parseAmount(value: string | undefined): number {
  if (value === undefined) return 0;
  try {
    return finiteOrZero(JSON.parse(value));
  } catch {
    return 0;
  }
}

function finiteOrZero(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}
