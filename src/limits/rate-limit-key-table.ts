import type { CounterWindow } from './rate-limit-counter-window.ts';

/** One key's counters in one window. */
export interface RateLimitKeyEntry {
  readonly windowStart: number;
  requests: CounterWindow | undefined;
  tokens: CounterWindow | undefined;
}

/**
 * The limiter's per-key state, bounded two ways: an entry lives only as long as its window (a key seen in a new
 * window gets a fresh entry, and entries whose window is over are swept from the cold end a few per call), and the
 * table holds at most `maxKeys` entries, evicting the least recently used. A Map keeps insertion order, so moving a
 * key to the end on use makes the front the coldest entry.
 */
export class RateLimitKeyTable {
  private readonly entries = new Map<string, RateLimitKeyEntry>();
  private readonly maxKeys: number;
  private readonly windowMs: number;
  private readonly onEvict: (entry: RateLimitKeyEntry) => void;
  /**
   * The key used last, which is at the recent end of `entries`: using it again needs no move. A move is a delete and a
   * set, and a Map's delete may reallocate its table, in the old generation once the Map is old: at one key's request
   * rate that was a few hundred bytes of old-generation garbage per request.
   */
  private mostRecentKeyId: string | undefined;

  constructor(options: { maxKeys: number; windowMs: number; onEvict: (entry: RateLimitKeyEntry) => void }) {
    this.maxKeys = options.maxKeys;
    this.windowMs = options.windowMs;
    this.onEvict = options.onEvict;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The key's entry for the window starting at `windowStart`, created (fresh) when the key is new to that window. */
  entryFor(keyId: string, windowStart: number): RateLimitKeyEntry {
    const entries = this.entries;
    let entry = entries.get(keyId);
    const fresh = entry === undefined || entry.windowStart !== windowStart;
    if (fresh) entry = { windowStart, requests: undefined, tokens: undefined };
    if (keyId !== this.mostRecentKeyId) {
      entries.delete(keyId);
      entries.set(keyId, entry!);
      this.mostRecentKeyId = keyId;
    } else if (fresh) {
      // Already at the recent end (or swept, and then appended there).
      entries.set(keyId, entry!);
    }
    this.sweep(windowStart);
    return entry!;
  }

  /** Drops up to two entries from the cold end whose window is over, then evicts down to the cap. */
  private sweep(windowStart: number): void {
    let swept = 0;
    for (const [keyId, entry] of this.entries) {
      if (swept === 2 || entry.windowStart + this.windowMs > windowStart) break;
      this.entries.delete(keyId);
      swept += 1;
    }
    while (this.entries.size > this.maxKeys) {
      const coldest = this.entries.entries().next().value;
      if (coldest === undefined) break;
      this.entries.delete(coldest[0]);
      this.onEvict(coldest[1]);
    }
  }
}
