/** What a {@link LruMap} is made with. */
export interface LruMapOptions {
  /** The most entries held; setting a new key when full evicts the least recently used one. At least 1. */
  maxEntries: number;
  /**
   * A monotonic clock in milliseconds, for expiry. Defaults to `performance.now()`, which wall-clock changes do
   * not move. Tests inject their own.
   */
  now?: () => number;
}

/** No slot: the end of the recency list. */
const none = -1;

/** Slots are allocated in chunks of this many (or fewer when the cap is lower), then doubled up to the cap. */
const initialCapacity = 256;

/**
 * A synchronous in-process LRU map with a size cap and per-entry expiry: the first tier of the key lookup, on the
 * request path.
 *
 * Every operation is O(1) and allocates nothing once the map has grown to its working size: entries live in
 * parallel arrays indexed by slot (keys, values, expiry times) with a doubly linked recency list kept in typed
 * arrays, and a `Map` from key to slot. Freed slots are reused. The arrays grow by doubling up to `maxEntries`, so
 * a large cap costs memory only once it is used.
 *
 * Expired entries are dropped when read (or evicted as the least recently used); `size` counts the entries held,
 * which may include expired entries not read since they expired.
 *
 * @example
 * ```ts
 * const records = new LruMap<VirtualKeyRecord>({ maxEntries: 100_000 });
 * records.set(hash, record, 30_000);
 * const cached = records.get(hash); // the record, or undefined after 30 s or once evicted
 * ```
 */
export class LruMap<V> {
  readonly maxEntries: number;
  readonly #now: () => number;
  readonly #slotByKey = new Map<string, number>();
  #keys: (string | undefined)[] = [];
  #values: (V | undefined)[] = [];
  #expiresAt: Float64Array;
  /** Towards the most recently used end. */
  #next: Int32Array;
  /** Towards the least recently used end. */
  #previous: Int32Array;
  /** The least recently used slot. */
  #head = none;
  /** The most recently used slot. */
  #tail = none;
  /** Slots freed by `delete` or expiry, reused before new ones. */
  #freeSlots: number[] = [];
  /** Slots handed out so far (the next new slot's index). */
  #usedSlots = 0;

  constructor(options: LruMapOptions) {
    if (!Number.isInteger(options.maxEntries) || options.maxEntries < 1 || options.maxEntries > 2 ** 31 - 1)
      throw new RangeError(`maxEntries must be a whole number from 1, got ${options.maxEntries}.`);
    this.maxEntries = options.maxEntries;
    this.#now = options.now ?? (() => performance.now());
    const capacity = Math.min(initialCapacity, this.maxEntries);
    this.#expiresAt = new Float64Array(capacity);
    this.#next = new Int32Array(capacity);
    this.#previous = new Int32Array(capacity);
  }

  /** The number of entries held (expired entries not read since they expired included). */
  get size(): number {
    return this.#slotByKey.size;
  }

  /** The value, or undefined when absent or expired. A hit makes the entry the most recently used. */
  get(key: string): V | undefined {
    const slot = this.#slotByKey.get(key);
    if (slot === undefined) return undefined;
    if (this.#expiresAt[slot]! <= this.#now()) {
      this.#remove(slot, key);
      return undefined;
    }
    this.#moveToTail(slot);
    return this.#values[slot];
  }

  /**
   * Stores the value for `ttlMs` milliseconds (`Infinity` for no expiry), replacing any current one and making it
   * the most recently used; evicts the least recently used entry when the map is full.
   */
  set(key: string, value: V, ttlMs: number): void {
    if (!(ttlMs > 0)) throw new RangeError(`ttlMs must be positive, got ${ttlMs}.`);
    const expiresAt = this.#now() + ttlMs;
    let slot = this.#slotByKey.get(key);
    if (slot !== undefined) {
      this.#values[slot] = value;
      this.#expiresAt[slot] = expiresAt;
      this.#moveToTail(slot);
      return;
    }
    if (this.#slotByKey.size >= this.maxEntries) {
      slot = this.#head;
      this.#slotByKey.delete(this.#keys[slot]!);
      this.#unlink(slot);
    } else {
      slot = this.#freeSlots.pop() ?? this.#newSlot();
    }
    this.#keys[slot] = key;
    this.#values[slot] = value;
    this.#expiresAt[slot] = expiresAt;
    this.#slotByKey.set(key, slot);
    this.#linkAtTail(slot);
  }

  /** Removes the entry; answers whether there was one (expired or not). */
  delete(key: string): boolean {
    const slot = this.#slotByKey.get(key);
    if (slot === undefined) return false;
    this.#remove(slot, key);
    return true;
  }

  /** Removes every entry (the arrays keep their size for reuse). */
  clear(): void {
    this.#slotByKey.clear();
    this.#keys.fill(undefined);
    this.#values.fill(undefined);
    this.#freeSlots.length = 0;
    this.#usedSlots = 0;
    this.#head = none;
    this.#tail = none;
  }

  #remove(slot: number, key: string): void {
    this.#slotByKey.delete(key);
    this.#unlink(slot);
    // Let the key and value be collected now rather than when the slot is reused.
    this.#keys[slot] = undefined;
    this.#values[slot] = undefined;
    this.#freeSlots.push(slot);
  }

  #newSlot(): number {
    const slot = this.#usedSlots++;
    if (slot >= this.#next.length) this.#grow();
    return slot;
  }

  #grow(): void {
    const capacity = Math.min(this.#next.length * 2, this.maxEntries);
    const expiresAt = new Float64Array(capacity);
    expiresAt.set(this.#expiresAt);
    this.#expiresAt = expiresAt;
    const next = new Int32Array(capacity);
    next.set(this.#next);
    this.#next = next;
    const previous = new Int32Array(capacity);
    previous.set(this.#previous);
    this.#previous = previous;
  }

  #moveToTail(slot: number): void {
    if (slot === this.#tail) return;
    this.#unlink(slot);
    this.#linkAtTail(slot);
  }

  #linkAtTail(slot: number): void {
    this.#previous[slot] = this.#tail;
    this.#next[slot] = none;
    if (this.#tail === none) this.#head = slot;
    else this.#next[this.#tail] = slot;
    this.#tail = slot;
  }

  #unlink(slot: number): void {
    const previous = this.#previous[slot]!;
    const next = this.#next[slot]!;
    if (previous === none) this.#head = next;
    else this.#next[previous] = next;
    if (next === none) this.#tail = previous;
    else this.#previous[next] = previous;
  }
}
