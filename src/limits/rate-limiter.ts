import type { LimitStore } from './limit-store.ts';
import { CounterWindow, type CounterWindowContext, type RateLimitMode } from './rate-limit-counter-window.ts';
import { rateLimitHeaders } from './rate-limit-headers.ts';
import { RateLimitKeyTable, type RateLimitKeyEntry } from './rate-limit-key-table.ts';
import type { RateLimitOutcome, RateLimitRefusal, RateLimitReservation } from './rate-limit-outcome.ts';
import { windowStartOf } from './window-clock.ts';

export type { RateLimitMode } from './rate-limit-counter-window.ts';

/** What {@link createRateLimiter} takes. */
export interface RateLimiterOptions {
  /** `leased` (default when a store is given), `strict`, or `local` (default without a store). */
  mode?: RateLimitMode;
  /** The shared store; required for `leased` and `strict`, ignored by `local`. */
  store?: LimitStore;
  /** Wall clock in epoch ms (windows align to it). Defaults to `Date.now`. */
  now?: () => number;
  /** Window length in ms. Defaults to one minute; shorter windows are for tests. */
  windowMs?: number;
  /** `leased`: a slice is this fraction of the window's remaining quota, at least 1 unit. Defaults to 0.1. */
  sliceFraction?: number;
  /** `leased`: refill in the background once the held units fall below this fraction of a slice. Defaults to 0.5. */
  refillBelowFraction?: number;
  /**
   * `leased`: how long the store's "not enough left" is trusted, so a flood of refused requests costs one store call
   * per counter per `recheckMs` rather than one each. Defaults to min(1 s, windowMs / 10).
   */
  recheckMs?: number;
  /** A store call slower than this counts as a failure. Defaults to 1 s. */
  leaseTimeoutMs?: number;
  /** After a store failure, counters count locally (fail open, bounded) for this long. Defaults to 5 s. */
  storeRetryMs?: number;
  /** Most keys kept in memory; the least recently used are evicted (their slices given back). Defaults to 10,000. */
  maxKeys?: number;
  /** Receives every background store call (Workers: `executionCtx.waitUntil`). */
  waitUntil?: (work: Promise<unknown>) => void;
  /** Told about store failures; the limiter itself never throws them. */
  onStoreError?: (error: unknown, counter: string) => void;
}

/** One request to admit. A limit that is undefined or null is no limit. */
export interface RateLimitRequest {
  keyId: string;
  /** Requests per window (per minute by default). */
  rpmLimit?: number | null;
  /** Tokens per window (per minute by default). */
  tpmLimit?: number | null;
  /** Tokens the request is expected to use (prompt estimate plus the completion allowance); rounded up. */
  estimatedTokens: number;
}

/** Per-key RPM and TPM limits, reserved before the upstream call and settled with real usage after it. */
export interface RateLimiter {
  readonly mode: RateLimitMode;
  /**
   * Admits or refuses a request. Answers synchronously (a plain value, no Promise) when this process can decide
   * alone: the units are held locally, the store said recently there are not enough, or the mode is `local`. Answers
   * a Promise when it must ask the store (the first request of a window, an empty slice, every request in `strict`).
   */
  reserve(request: RateLimitRequest): RateLimitOutcome | Promise<RateLimitOutcome>;
  /**
   * Settles a reservation with the tokens the request really used: unused tokens go back, extra tokens are charged
   * (even above the limit: they are spent). The request stays counted. Calling it twice, or after
   * {@link RateLimiter.release}, does nothing.
   */
  settle(reservation: RateLimitReservation, actualTokens: number): void;
  /**
   * For a request that failed before the upstream used anything: gives back all its reserved tokens. The request
   * itself stays counted against RPM, as OpenAI counts failed requests, so a client retrying failures in a tight
   * loop is still limited. (A refused request is not counted: a refusal takes nothing.)
   */
  release(reservation: RateLimitReservation): void;
  /** OpenAI's `x-ratelimit-*` headers for an outcome, with reset times from now (see `rate-limit-headers.ts`). */
  headers(outcome: RateLimitOutcome): Record<string, string>;
  /** Resolves when every background store call started so far has finished (shutdown, tests). */
  drain(): Promise<void>;
}

interface ReservationParts {
  requests: CounterWindow | undefined;
  tokens: CounterWindow | undefined;
  done: boolean;
}

const isLimit = (limit: number | null | undefined): limit is number =>
  typeof limit === 'number' && limit < Number.POSITIVE_INFINITY;

/**
 * Creates the per-key rate limiter. Windows are fixed and aligned to the epoch (`window-clock.ts`): a client can get
 * up to twice a limit across a window boundary, never more.
 *
 * Modes and their bounds, with P processes sharing one key:
 *
 * - `leased` (the default with a store): each process leases a slice of the key's quota from the store and admits
 *   requests from it in memory, refilling in the background when it runs low, so the request path makes no store
 *   call while slices last. A slice is `sliceFraction` (0.1) of the window's remainder as last seen, at least 1, so
 *   slices shrink as the window fills. Over-admission: none; every admitted request and reserved token was granted
 *   atomically by the store, so admitted requests and reserved tokens never pass the limit. Tokens actually used can
 *   pass it by the estimation error of requests in flight (settled afterwards). Under-admission: a request may be
 *   refused while other processes hold units they have not used, at most (P - 1) x (2 slices + one request's
 *   estimate), and for up to `recheckMs` after the store said "not enough" while others give units back. When
 *   every process is busy they spend what they hold and the total admitted is the limit. Requests that find the
 *   slice spent wait for one lease sized to all of them (not one slice per wake-up), so a burst arriving at once is
 *   admitted up to the limit; after a refusal, units held beyond two slices go back to the store.
 * - `strict`: every request makes one store round trip (its RPM and TPM leases run concurrently, all-or-nothing).
 *   Exact; a request refused by one counter gives back what the other granted, so another request can meet a
 *   transiently taken unit for the length of one round trip.
 * - `local` (the default without a store): counts in this process only, synchronously and exactly; P processes
 *   admit up to P times the limit.
 *
 * When the store fails or is slower than `leaseTimeoutMs`, a counter counts locally for the rest of its window,
 * taking the remainder it last saw as its own (fail open, bounded by P x that remainder), and the store is left
 * alone for `storeRetryMs`.
 *
 * Memory: one entry per key seen in the current window, at most `maxKeys`; entries of past windows are swept.
 *
 * @example
 * ```ts
 * const limiter = createRateLimiter({ mode: 'leased', store: createRedisLimitStore({ redis }) });
 * const outcome = await limiter.reserve({ keyId, rpmLimit: 60, tpmLimit: 100_000, estimatedTokens: 1_200 });
 * if (!outcome.allowed) throw rateLimitError(outcome); // a 429 with retry-after and x-ratelimit-* headers
 * // ... call the upstream ...
 * limiter.settle(outcome, usage.totalTokens);
 * ```
 */
export function createRateLimiter(options: RateLimiterOptions = {}): RateLimiter {
  const mode: RateLimitMode = options.mode ?? (options.store === undefined ? 'local' : 'leased');
  if (mode !== 'local' && options.store === undefined) {
    throw new Error(`The ${mode} rate limiter needs a shared limit store.`);
  }
  const now = options.now ?? Date.now;
  const windowMs = options.windowMs ?? 60_000;
  const storeRetryMs = options.storeRetryMs ?? 5_000;
  const onStoreError = options.onStoreError;
  const inFlight = new Set<Promise<unknown>>();
  let storeDownUntil = Number.NEGATIVE_INFINITY;

  const context: CounterWindowContext = {
    mode,
    store: mode === 'local' ? undefined : options.store,
    windowMs,
    sliceFraction: options.sliceFraction ?? 0.1,
    refillBelowFraction: options.refillBelowFraction ?? 0.5,
    recheckMs: options.recheckMs ?? Math.min(1_000, windowMs / 10),
    leaseTimeoutMs: options.leaseTimeoutMs ?? 1_000,
    now,
    storeAvailable: () => now() >= storeDownUntil,
    reportStoreError(error, counter) {
      storeDownUntil = now() + storeRetryMs;
      onStoreError?.(error, counter);
    },
    track(work) {
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
      options.waitUntil?.(work);
    },
  };

  const table = new RateLimitKeyTable({
    maxKeys: options.maxKeys ?? 10_000,
    windowMs,
    onEvict(entry) {
      entry.requests?.releaseHeld();
      entry.tokens?.releaseHeld();
    },
  });
  // What a reservation holds of this limiter, under a key only this limiter knows: a fabricated or foreign
  // reservation settles nothing. (A property, not a WeakMap: one ephemeron per request was GC work on every scavenge.)
  const partsKey = Symbol('rate limit reservation parts');
  const partsOf = (reservation: RateLimitReservation): ReservationParts | undefined =>
    (reservation as RateLimitReservation & { [partsKey]?: ReservationParts })[partsKey];

  /** The key's counters for the current window, following limits that changed. */
  const countersFor = (entry: RateLimitKeyEntry, request: RateLimitRequest) => {
    if (isLimit(request.rpmLimit)) {
      if (entry.requests === undefined) {
        entry.requests = new CounterWindow(context, `rpm:${request.keyId}`, entry.windowStart, request.rpmLimit);
      } else entry.requests.setLimit(request.rpmLimit);
    }
    if (isLimit(request.tpmLimit)) {
      if (entry.tokens === undefined) {
        entry.tokens = new CounterWindow(context, `tpm:${request.keyId}`, entry.windowStart, request.tpmLimit);
      } else entry.tokens.setLimit(request.tpmLimit);
    }
    return {
      requests: isLimit(request.rpmLimit) ? entry.requests : undefined,
      tokens: isLimit(request.tpmLimit) ? entry.tokens : undefined,
    };
  };

  const admit = (
    request: RateLimitRequest,
    estimatedTokens: number,
    requests: CounterWindow | undefined,
    tokens: CounterWindow | undefined,
    windowStart: number,
  ): RateLimitReservation => {
    const reservation: RateLimitReservation & { [partsKey]: ReservationParts } = {
      allowed: true,
      keyId: request.keyId,
      estimatedTokens,
      windowStart,
      requests: requests?.state(),
      tokens: tokens?.state(),
      [partsKey]: { requests, tokens, done: false },
    };
    return reservation;
  };

  const refuse = (
    request: RateLimitRequest,
    limited: 'rpm' | 'tpm',
    requested: number,
    requests: CounterWindow | undefined,
    tokens: CounterWindow | undefined,
    at: number,
  ): RateLimitRefusal => {
    const counter = (limited === 'rpm' ? requests : tokens) as CounterWindow;
    requests?.trimHeld();
    tokens?.trimHeld();
    return {
      allowed: false,
      keyId: request.keyId,
      limited,
      retryAfterSeconds: Math.max(1, Math.ceil((counter.windowEnd - at) / 1000)),
      limit: counter.limit,
      remaining: counter.remaining(),
      resetAt: counter.windowEnd,
      requested,
      requestTooLarge: limited === 'tpm' && requested > counter.limit,
      requests: requests?.state(),
      tokens: tokens?.state(),
    };
  };

  /** One try from local state: an outcome, or the leases to wait for before trying again. */
  const attempt = (request: RateLimitRequest, estimatedTokens: number): RateLimitOutcome | Promise<unknown> => {
    const at = now();
    const windowStart = windowStartOf(at, windowMs);
    const { requests, tokens } = countersFor(table.entryFor(request.keyId, windowStart), request);
    const requestsCheck = requests?.check(1, at) ?? 'ok';
    if (requestsCheck === 'refuse') return refuse(request, 'rpm', 1, requests, tokens, at);
    const tokensCheck = tokens?.check(estimatedTokens, at) ?? 'ok';
    if (tokensCheck === 'refuse') return refuse(request, 'tpm', estimatedTokens, requests, tokens, at);
    if (requestsCheck === 'wait' || tokensCheck === 'wait') {
      return Promise.all([
        requestsCheck === 'wait' ? requests?.acquire(1) : undefined,
        tokensCheck === 'wait' ? tokens?.acquire(estimatedTokens) : undefined,
      ]);
    }
    requests?.take(1);
    tokens?.take(estimatedTokens);
    return admit(request, estimatedTokens, requests, tokens, windowStart);
  };

  /** Leased mode after a miss: waits for the leases and tries again; contention for fresh units is bounded. */
  const attemptAfterLeases = async (
    request: RateLimitRequest,
    estimatedTokens: number,
    leases: Promise<unknown>,
  ): Promise<RateLimitOutcome> => {
    let waiting = leases;
    for (let tries = 0; tries < 3; tries += 1) {
      await waiting;
      const outcome = attempt(request, estimatedTokens);
      if (!(outcome instanceof Promise)) return outcome;
      waiting = outcome;
    }
    await waiting;
    // Other requests of this process took the fresh units three times over: refuse with the numbers as they are.
    const at = now();
    const { requests, tokens } = countersFor(table.entryFor(request.keyId, windowStartOf(at, windowMs)), request);
    const requestsShort = requests !== undefined && (requests.held < 1 || tokens === undefined);
    return refuse(request, requestsShort ? 'rpm' : 'tpm', requestsShort ? 1 : estimatedTokens, requests, tokens, at);
  };

  /** Strict mode: both leases at once, all-or-nothing; a degraded counter decides from its local count. */
  const reserveStrict = async (request: RateLimitRequest, estimatedTokens: number): Promise<RateLimitOutcome> => {
    const at = now();
    const windowStart = windowStartOf(at, windowMs);
    const { requests, tokens } = countersFor(table.entryFor(request.keyId, windowStart), request);
    if (requests !== undefined && requests.limit < 1) return refuse(request, 'rpm', 1, requests, tokens, at);
    if (tokens !== undefined && estimatedTokens > tokens.limit) {
      return refuse(request, 'tpm', estimatedTokens, requests, tokens, at);
    }
    const needs: Array<[CounterWindow | undefined, number]> = [
      [requests, 1],
      [tokens, estimatedTokens],
    ];
    const granted = await Promise.all(
      needs.map(([counter, amount]) =>
        counter === undefined || amount <= 0 || counter.degraded ? false : counter.leaseExact(amount),
      ),
    );
    const decided = needs.map(([counter, amount], index) => {
      if (counter === undefined || amount <= 0 || granted[index] === true) return true;
      return counter.degraded && counter.check(amount, now()) === 'ok';
    });
    if (decided[0] === true && decided[1] === true) {
      needs.forEach(([counter, amount], index) => {
        if (counter !== undefined && amount > 0 && granted[index] !== true) counter.take(amount);
      });
      return admit(request, estimatedTokens, requests, tokens, windowStart);
    }
    needs.forEach(([counter, amount], index) => {
      if (counter !== undefined && granted[index] === true) counter.giveBack(amount);
    });
    const limited = decided[0] === true ? 'tpm' : 'rpm';
    return refuse(request, limited, limited === 'rpm' ? 1 : estimatedTokens, requests, tokens, now());
  };

  return {
    mode,
    reserve(request) {
      const estimatedTokens = Math.max(0, Math.ceil(request.estimatedTokens));
      if (mode === 'strict') return reserveStrict(request, estimatedTokens);
      const outcome = attempt(request, estimatedTokens);
      return outcome instanceof Promise ? attemptAfterLeases(request, estimatedTokens, outcome) : outcome;
    },
    settle(reservation, actualTokens) {
      const parts = partsOf(reservation);
      if (parts === undefined || parts.done) return;
      parts.done = true;
      const difference = Math.max(0, Math.ceil(actualTokens)) - reservation.estimatedTokens;
      if (difference < 0) parts.tokens?.giveBack(-difference);
      else parts.tokens?.charge(difference);
    },
    release(reservation) {
      const parts = partsOf(reservation);
      if (parts === undefined || parts.done) return;
      parts.done = true;
      parts.tokens?.giveBack(reservation.estimatedTokens);
    },
    headers(outcome) {
      return rateLimitHeaders(outcome, now());
    },
    async drain() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
