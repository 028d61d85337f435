import type { LimitStore } from './limit-store.ts';
import type { RateLimitWindowState } from './rate-limit-outcome.ts';

/** How the limiter counts; see `createRateLimiter` for what each mode promises. */
export type RateLimitMode = 'leased' | 'strict' | 'local';

/** What every {@link CounterWindow} of one limiter shares. */
export interface CounterWindowContext {
  readonly mode: RateLimitMode;
  /** The shared store; undefined in `local` mode. */
  readonly store: LimitStore | undefined;
  readonly windowMs: number;
  /** A slice is this fraction of the window's remaining quota (as last seen), at least 1 unit. */
  readonly sliceFraction: number;
  /** A slice is refilled in the background once what is held falls below this fraction of a slice. */
  readonly refillBelowFraction: number;
  /** How long a store answer saying "not enough left" is trusted before a request may ask the store again. */
  readonly recheckMs: number;
  /** A lease that takes longer than this counts as a store failure. */
  readonly leaseTimeoutMs: number;
  /** Wall clock, epoch ms. */
  now(): number;
  /** False while the store is in its back-off after a failure: counters then count locally. */
  storeAvailable(): boolean;
  reportStoreError(error: unknown, counter: string): void;
  /** Keeps a background store call alive (waitUntil) and lets `drain` wait for it. */
  track(work: Promise<unknown>): void;
}

/**
 * One counter (`rpm:<keyId>` or `tpm:<keyId>`) of one key in one window, as this process sees it.
 *
 * - `held`: units this process took from the store (a slice) and has not handed to a request yet. In `local` mode
 *   it starts at the whole limit (this process is the only one counting); in `strict` mode it stays 0.
 * - `knownUsed`: the window's total in the store at the last answer, including what this process holds, so
 *   `limit - knownUsed + held` is what this process believes is left for it.
 *
 * When the store fails (or times out) the counter degrades for the rest of its window: it takes the remainder it
 * last knew as its own and counts locally, so a store outage lets each process admit at most what was left (fail
 * open, bounded), instead of refusing everything or stalling the request path.
 */
export class CounterWindow {
  readonly counter: string;
  readonly windowStart: number;
  readonly windowEnd: number;
  limit: number;
  held = 0;
  knownUsed = 0;
  knownAt = Number.NEGATIVE_INFINITY;
  degraded = false;
  /** The lease in flight, if any: never more than one per counter and window. */
  leasing: Promise<void> | undefined;
  /** Units that requests waiting for the lease in flight need: the lease keeps asking until they are covered. */
  private waiting = 0;
  private pendingRelease = 0;
  private pendingAdd = 0;
  private flushing: Promise<void> | undefined;
  private readonly context: CounterWindowContext;

  constructor(context: CounterWindowContext, counter: string, windowStart: number, limit: number) {
    this.context = context;
    this.counter = counter;
    this.windowStart = windowStart;
    this.windowEnd = windowStart + context.windowMs;
    this.limit = limit;
    if (context.mode === 'local') {
      this.held = limit;
      this.knownUsed = limit;
    } else if (!context.storeAvailable()) {
      this.degrade();
    }
  }

  /** Follows a changed limit (an administrator edited the key mid-window). */
  setLimit(limit: number): void {
    if (limit === this.limit) return;
    if (this.context.mode === 'local' || this.degraded) {
      this.held += limit - this.limit;
      this.knownUsed = limit;
    }
    this.limit = limit;
  }

  /** Units this process believes are left for it in the window (see the class comment). */
  remaining(): number {
    return Math.max(0, Math.max(0, this.limit - this.knownUsed) + this.held);
  }

  state(): RateLimitWindowState {
    return { limit: this.limit, remaining: this.remaining(), resetAt: this.windowEnd };
  }

  /** The next slice: `sliceFraction` of the remainder last seen in the store, at least 1. */
  sliceSize(): number {
    return Math.max(1, Math.ceil(this.context.sliceFraction * Math.max(0, this.limit - this.knownUsed)));
  }

  /**
   * Whether `amount` units can be taken now (`ok`), certainly cannot (`refuse`: more than the limit, or more than
   * is left by an answer younger than `recheckMs`, or no store to ask), or the store must be asked (`wait`).
   */
  check(amount: number, now: number): 'ok' | 'refuse' | 'wait' {
    if (amount <= 0) return 'ok';
    if (amount > this.limit) return 'refuse';
    if (this.held >= amount) return 'ok';
    if (this.context.mode === 'local' || this.degraded) return 'refuse';
    if (!this.context.storeAvailable()) {
      this.degrade();
      return this.held >= amount ? 'ok' : 'refuse';
    }
    const believedLeft = this.held + Math.max(0, this.limit - this.knownUsed);
    if (amount > believedLeft && now - this.knownAt < this.context.recheckMs) return 'refuse';
    return 'wait';
  }

  /** Hands `amount` held units to a request (after `check` said `ok`), refilling in the background when low. */
  take(amount: number): void {
    this.held -= amount;
    if (this.context.mode !== 'leased' || this.degraded || this.leasing !== undefined) return;
    const slice = this.sliceSize();
    if (this.held < Math.ceil(slice * this.context.refillBelowFraction) && this.limit > this.knownUsed) {
      void this.lease(slice, 1);
    }
  }

  /**
   * Leases enough for `amount` units (and a slice), or joins the lease already in flight; either way the request's
   * need counts towards what that lease asks the store for, so a burst that arrives at once is covered by one lease
   * (and a follow-up for the requests that joined it late) instead of one slice per wake-up.
   */
  acquire(amount: number): Promise<void> {
    this.waiting += amount;
    const leasing =
      this.leasing ?? this.lease(Math.max(this.sliceSize(), this.waiting - this.held), Math.max(1, amount - this.held));
    return leasing.finally(() => {
      this.waiting -= amount;
    });
  }

  /**
   * Strict mode: takes exactly `amount` units from the store, all or nothing, holding none. Answers whether it got
   * them; on a store failure the counter degrades and the caller falls back to {@link check}/{@link take}.
   */
  async leaseExact(amount: number): Promise<boolean> {
    const store = this.context.store;
    if (store === undefined || this.degraded) return false;
    try {
      const { granted, used } = await this.withTimeout(
        store.lease({
          counter: this.counter,
          windowStart: this.windowStart,
          windowMs: this.context.windowMs,
          amount,
          limit: this.limit,
          minimum: amount,
        }),
      );
      this.knownUsed = used;
      this.knownAt = this.context.now();
      return granted >= amount;
    } catch (error) {
      this.context.reportStoreError(error, this.counter);
      this.degrade();
      return false;
    }
  }

  /**
   * Returns units a request reserved and did not use. `leased` keeps them as held up to two slices (they are already
   * counted in the store; none while a lease is in flight) and gives the rest back to the store in the background;
   * `strict` gives them all back; `local` just counts them free again. Nothing happens once the window is over.
   *
   * Two slices, not one: right after a lease this process holds about a slice while the slice size, computed from
   * the store's remainder that now counts that lease, is a little smaller; with a one-slice cap every request's
   * unused estimate went back to the store, one store call per request.
   */
  giveBack(amount: number): void {
    if (amount <= 0 || this.context.now() >= this.windowEnd) return;
    if (this.context.mode === 'local' || this.degraded) {
      this.held += amount;
      return;
    }
    // Keep at most two slices held (none while a lease is in flight: it brings a slice), so what a process can
    // strand stays within the bound stated on createRateLimiter.
    const keep =
      this.context.mode === 'leased' && this.leasing === undefined
        ? Math.min(amount, Math.max(0, 2 * this.sliceSize() - this.held))
        : 0;
    this.held += keep;
    this.pendingRelease += amount - keep;
    this.knownUsed -= amount - keep;
    this.flush();
  }

  /**
   * Charges units a request used beyond its reservation: from what is held first, the rest added to the store in
   * the background without a limit check (the upstream already spent them). Locally the rest becomes a debt.
   */
  charge(amount: number): void {
    if (amount <= 0 || this.context.now() >= this.windowEnd) return;
    const fromHeld = Math.min(amount, Math.max(0, this.held));
    this.held -= fromHeld;
    const rest = amount - fromHeld;
    if (rest === 0) return;
    if (this.context.mode === 'local' || this.degraded) {
      this.held -= rest;
      return;
    }
    this.pendingAdd += rest;
    this.knownUsed += rest;
    this.flush();
  }

  /**
   * Gives back to the store what is held beyond two slices (after a refusal: a burst's lease may have brought units
   * for requests that the other counter then refused), so what a process strands stays within the stated bound.
   */
  trimHeld(): void {
    if (this.context.mode !== 'leased' || this.degraded || this.leasing !== undefined) return;
    const excess = this.held - 2 * this.sliceSize();
    if (excess <= 0 || this.context.now() >= this.windowEnd) return;
    this.held -= excess;
    this.pendingRelease += excess;
    this.knownUsed -= excess;
    this.flush();
  }

  /** Gives every held unit back to the store (the key is being evicted from memory while its window runs). */
  releaseHeld(): void {
    if (this.context.mode !== 'leased' || this.degraded || this.held <= 0) return;
    if (this.context.now() >= this.windowEnd) return;
    this.pendingRelease += this.held;
    this.knownUsed -= this.held;
    this.held = 0;
    this.flush();
  }

  /**
   * One lease in flight for the counter: asks for `amount` (at least `minimum`), then, while requests waiting on it
   * need more than is held and the store granted in full (so it may have more), asks again for the shortfall (a
   * few rounds at most: requests keep joining while it runs).
   */
  private lease(amount: number, minimum: number): Promise<void> {
    const store = this.context.store as LimitStore;
    const window = { counter: this.counter, windowStart: this.windowStart, windowMs: this.context.windowMs };
    const run = async (): Promise<void> => {
      let asked = amount;
      let least = minimum;
      for (let round = 0; round < 4; round += 1) {
        const { granted, used } = await this.withTimeout(
          store.lease({ ...window, amount: asked, limit: this.limit, minimum: least }),
        );
        this.held += granted;
        this.knownUsed = used;
        this.knownAt = this.context.now();
        const shortfall = this.waiting - this.held;
        if (granted < asked || shortfall <= 0 || used >= this.limit) return;
        asked = shortfall;
        least = 1;
      }
    };
    const leasing = run()
      .catch((error: unknown) => {
        this.context.reportStoreError(error, this.counter);
        this.degrade();
      })
      .finally(() => {
        this.leasing = undefined;
      });
    this.leasing = leasing;
    this.context.track(leasing);
    return leasing;
  }

  /** Sends pending releases and additions, netted, one call at a time. */
  private flush(): void {
    const store = this.context.store;
    if (store === undefined || this.flushing !== undefined) return;
    // Nothing to send (a give-back kept whole as held units, the common case): no promise chain per request.
    if (this.pendingAdd <= 0 && this.pendingRelease <= 0) return;
    const window = { counter: this.counter, windowStart: this.windowStart, windowMs: this.context.windowMs };
    const flushing = (async () => {
      while (this.pendingAdd > 0 || this.pendingRelease > 0) {
        const net = this.pendingAdd - this.pendingRelease;
        this.pendingAdd = 0;
        this.pendingRelease = 0;
        if (net > 0) await this.withTimeout(store.add({ ...window, amount: net }));
        else if (net < 0) await this.withTimeout(store.release({ ...window, amount: -net }));
      }
    })()
      .catch((error: unknown) => this.context.reportStoreError(error, this.counter))
      .finally(() => {
        this.flushing = undefined;
      });
    this.flushing = flushing;
    this.context.track(flushing);
  }

  /** Counts locally for the rest of the window, taking the remainder last seen in the store as this process's own. */
  private degrade(): void {
    if (this.degraded) return;
    this.degraded = true;
    this.held += Math.max(0, this.limit - this.knownUsed);
    this.knownUsed = this.limit;
  }

  private withTimeout<T>(work: Promise<T>): Promise<T> {
    const timeoutMs = this.context.leaseTimeoutMs;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`Limit store did not answer within ${timeoutMs} ms (${this.counter}).`)),
        timeoutMs,
      );
    });
    return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
  }
}
