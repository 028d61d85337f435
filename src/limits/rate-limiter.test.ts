import { describe, expect, it } from 'vitest';
import type { LimitLease, LimitStore } from './limit-store.ts';
import { createMemoryLimitStore } from './memory-limit-store.ts';
import type { RateLimitOutcome, RateLimitRefusal, RateLimitReservation } from './rate-limit-outcome.ts';
import { createRateLimiter, type RateLimiter, type RateLimitRequest } from './rate-limiter.ts';

/** A wall clock the test moves; starts 10 s into a minute. */
function testClock(start = 1_700_000_040_000 + 10_000) {
  const clock = { time: start, now: () => clock.time };
  return clock;
}
const windowOf = (time: number) => time - (time % 60_000);

/** The real memory store, counting calls and the leases in flight per counter (the most ever seen). */
function observedStore(inner: LimitStore = createMemoryLimitStore()) {
  const calls = { lease: 0, release: 0, add: 0 };
  const inFlight = new Map<string, number>();
  let mostInFlight = 0;
  const store: LimitStore = {
    async lease(request): Promise<LimitLease> {
      calls.lease += 1;
      inFlight.set(request.counter, (inFlight.get(request.counter) ?? 0) + 1);
      mostInFlight = Math.max(mostInFlight, inFlight.get(request.counter) ?? 0);
      await new Promise((resolve) => setTimeout(resolve, 1));
      try {
        return await inner.lease(request);
      } finally {
        inFlight.set(request.counter, (inFlight.get(request.counter) ?? 1) - 1);
      }
    },
    release(request) {
      calls.release += 1;
      return inner.release(request);
    },
    add(request) {
      calls.add += 1;
      return inner.add(request);
    },
  };
  return { store, calls, mostInFlight: () => mostInFlight };
}

/** What the store holds for a counter in the window of `time`. */
async function storeUsed(store: LimitStore, counter: string, time: number): Promise<number> {
  const answer = await store.lease({ counter, windowStart: windowOf(time), windowMs: 60_000, amount: 0, limit: 1 });
  return answer.used;
}

function expectAllowed(outcome: RateLimitOutcome | Promise<RateLimitOutcome>): RateLimitReservation {
  expect(outcome).not.toBeInstanceOf(Promise);
  const answer = outcome as RateLimitOutcome;
  if (!answer.allowed) throw new Error(`refused: ${JSON.stringify(answer)}`);
  return answer;
}

function expectRefused(outcome: RateLimitOutcome | Promise<RateLimitOutcome>): RateLimitRefusal {
  expect(outcome).not.toBeInstanceOf(Promise);
  const answer = outcome as RateLimitOutcome;
  if (answer.allowed) throw new Error('allowed');
  return answer;
}

const key = (overrides: Partial<RateLimitRequest> = {}): RateLimitRequest => ({
  keyId: 'key_1',
  rpmLimit: 3,
  tpmLimit: 1_000,
  estimatedTokens: 100,
  ...overrides,
});

describe('createRateLimiter: local mode', () => {
  it('admits synchronously up to the RPM limit, then refuses with the numbers of the 429', () => {
    const clock = testClock();
    const limiter = createRateLimiter({ now: clock.now });
    expect(limiter.mode).toBe('local');
    const first = expectAllowed(limiter.reserve(key()));
    expect(first).toMatchObject({
      keyId: 'key_1',
      estimatedTokens: 100,
      windowStart: windowOf(clock.time),
      requests: { limit: 3, remaining: 2, resetAt: windowOf(clock.time) + 60_000 },
      tokens: { limit: 1_000, remaining: 900, resetAt: windowOf(clock.time) + 60_000 },
    });
    expectAllowed(limiter.reserve(key()));
    expectAllowed(limiter.reserve(key()));
    clock.time += 19_500;
    expect(expectRefused(limiter.reserve(key()))).toEqual({
      allowed: false,
      keyId: 'key_1',
      limited: 'rpm',
      retryAfterSeconds: 31,
      limit: 3,
      remaining: 0,
      resetAt: windowOf(clock.time) + 60_000,
      requested: 1,
      requestTooLarge: false,
      requests: { limit: 3, remaining: 0, resetAt: windowOf(clock.time) + 60_000 },
      tokens: { limit: 1_000, remaining: 700, resetAt: windowOf(clock.time) + 60_000 },
    });
  });

  it('refuses on TPM when the estimate does not fit, without counting the request', () => {
    const limiter = createRateLimiter({ now: testClock().now });
    expectAllowed(limiter.reserve(key({ rpmLimit: 10, estimatedTokens: 700 })));
    const refusal = expectRefused(limiter.reserve(key({ rpmLimit: 10, estimatedTokens: 400 })));
    expect(refusal).toMatchObject({ limited: 'tpm', limit: 1_000, remaining: 300, requested: 400 });
    expect(refusal.requests?.remaining).toBe(9);
    expect(expectAllowed(limiter.reserve(key({ rpmLimit: 10, estimatedTokens: 300 }))).requests?.remaining).toBe(8);
  });

  it('marks an estimate above the whole TPM limit as too large', () => {
    const limiter = createRateLimiter({ now: testClock().now });
    expect(expectRefused(limiter.reserve(key({ estimatedTokens: 1_001 })))).toMatchObject({
      limited: 'tpm',
      requestTooLarge: true,
      requested: 1_001,
    });
  });

  it('settles by returning unused tokens and charging extra ones, once', () => {
    const limiter = createRateLimiter({ now: testClock().now });
    const small = expectAllowed(limiter.reserve(key({ rpmLimit: 10, estimatedTokens: 400 })));
    limiter.settle(small, 150);
    limiter.settle(small, 0);
    expect(expectAllowed(limiter.reserve(key({ rpmLimit: 10, estimatedTokens: 0 }))).tokens?.remaining).toBe(850);
    const big = expectAllowed(limiter.reserve(key({ rpmLimit: 10, estimatedTokens: 100 })));
    limiter.settle(big, 900.2);
    // 150 + 901 used: past the limit, so everything is refused and remaining reads 0.
    const refusal = expectRefused(limiter.reserve(key({ rpmLimit: 10, estimatedTokens: 1 })));
    expect(refusal).toMatchObject({ limited: 'tpm', remaining: 0 });
  });

  it('releases a failed request: its tokens come back, the request stays counted', () => {
    const limiter = createRateLimiter({ now: testClock().now });
    const failed = expectAllowed(limiter.reserve(key({ estimatedTokens: 600 })));
    limiter.release(failed);
    limiter.settle(failed, 600);
    const next = expectAllowed(limiter.reserve(key({ estimatedTokens: 600 })));
    expect(next.requests?.remaining).toBe(1);
    expect(next.tokens?.remaining).toBe(400);
  });

  it('starts every window afresh, and settling a past window leaves the new one alone', () => {
    const clock = testClock();
    const limiter = createRateLimiter({ now: clock.now });
    const old = expectAllowed(limiter.reserve(key({ rpmLimit: 1, estimatedTokens: 500 })));
    expectRefused(limiter.reserve(key({ rpmLimit: 1 })));
    clock.time = windowOf(clock.time) + 60_000;
    const fresh = expectAllowed(limiter.reserve(key({ rpmLimit: 1, estimatedTokens: 100 })));
    expect(fresh.windowStart).toBe(clock.time);
    expect(fresh.requests?.remaining).toBe(0);
    limiter.settle(old, 10);
    limiter.release(fresh);
    clock.time += 1;
    expect(expectRefused(limiter.reserve(key({ rpmLimit: 1 }))).tokens?.remaining).toBe(1_000);
  });

  it('leaves a counter without a limit alone and reports no headers for it', () => {
    const limiter = createRateLimiter({ now: testClock().now });
    const reservation = expectAllowed(limiter.reserve(key({ rpmLimit: null, tpmLimit: undefined })));
    expect(reservation.requests).toBeUndefined();
    expect(reservation.tokens).toBeUndefined();
    expect(limiter.headers(reservation)).toEqual({});
  });

  it("answers OpenAI's x-ratelimit-* headers with reset times from now", () => {
    const clock = testClock();
    const limiter = createRateLimiter({ now: clock.now });
    const reservation = expectAllowed(limiter.reserve(key({ rpmLimit: 60, tpmLimit: 150_000, estimatedTokens: 16 })));
    clock.time += 500;
    expect(limiter.headers(reservation)).toEqual({
      'x-ratelimit-limit-requests': '60',
      'x-ratelimit-remaining-requests': '59',
      'x-ratelimit-reset-requests': '49.5s',
      'x-ratelimit-limit-tokens': '150000',
      'x-ratelimit-remaining-tokens': '149984',
      'x-ratelimit-reset-tokens': '49.5s',
    });
  });

  it('follows a limit changed mid-window', () => {
    const limiter = createRateLimiter({ now: testClock().now });
    expectAllowed(limiter.reserve(key({ rpmLimit: 2 })));
    expectAllowed(limiter.reserve(key({ rpmLimit: 2 })));
    expectRefused(limiter.reserve(key({ rpmLimit: 2 })));
    expect(expectAllowed(limiter.reserve(key({ rpmLimit: 5 }))).requests?.remaining).toBe(2);
  });

  it('keeps at most maxKeys keys and sweeps keys of past windows', () => {
    const clock = testClock();
    const limiter = createRateLimiter({ now: clock.now, maxKeys: 2 });
    expectAllowed(limiter.reserve(key({ keyId: 'a', rpmLimit: 1 })));
    expectAllowed(limiter.reserve(key({ keyId: 'b', rpmLimit: 1 })));
    expectRefused(limiter.reserve(key({ keyId: 'a', rpmLimit: 1 })));
    expectAllowed(limiter.reserve(key({ keyId: 'c', rpmLimit: 1 })));
    // `b` was the least recently used and was evicted (local counts are lost with it); `a` was kept.
    expectAllowed(limiter.reserve(key({ keyId: 'b', rpmLimit: 1 })));
    expectRefused(limiter.reserve(key({ keyId: 'c', rpmLimit: 1 })));
  });

  it('keeps the least recently used order when one key is used again and again', () => {
    const clock = testClock();
    const limiter = createRateLimiter({ now: clock.now, maxKeys: 2 });
    // `a` twice in a row (the common case, answered without reordering anything), then `b` twice.
    expectAllowed(limiter.reserve(key({ keyId: 'a', rpmLimit: 2 })));
    expectAllowed(limiter.reserve(key({ keyId: 'a', rpmLimit: 2 })));
    expectAllowed(limiter.reserve(key({ keyId: 'b', rpmLimit: 1 })));
    expectRefused(limiter.reserve(key({ keyId: 'b', rpmLimit: 1 })));
    // `a` again: now `b` is the least recently used, and `c` evicts it, not `a`.
    expectRefused(limiter.reserve(key({ keyId: 'a', rpmLimit: 2 })));
    expectAllowed(limiter.reserve(key({ keyId: 'c', rpmLimit: 1 })));
    expectRefused(limiter.reserve(key({ keyId: 'a', rpmLimit: 2 })));
    expectAllowed(limiter.reserve(key({ keyId: 'b', rpmLimit: 1 })));
  });
});

describe('createRateLimiter: leased mode', () => {
  it('waits for a lease on the first request of a window, then answers from its slice synchronously', async () => {
    const clock = testClock();
    const shared = createMemoryLimitStore();
    const { store, calls } = observedStore(shared);
    const limiter = createRateLimiter({ mode: 'leased', store, now: clock.now });
    const first = limiter.reserve(key({ rpmLimit: 100, tpmLimit: 10_000, estimatedTokens: 100 }));
    expect(first).toBeInstanceOf(Promise);
    expect((await first).allowed).toBe(true);
    // Slices of 10% of the limit: 10 requests and 1,000 tokens, one lease each.
    expect(await storeUsed(shared, 'rpm:key_1', clock.time)).toBe(10);
    expect(await storeUsed(shared, 'tpm:key_1', clock.time)).toBe(1_000);
    for (let index = 0; index < 4; index += 1) {
      expectAllowed(limiter.reserve(key({ rpmLimit: 100, tpmLimit: 10_000, estimatedTokens: 100 })));
    }
    // Five requests and 500 tokens used: half of each slice is still held, so no refill yet.
    await limiter.drain();
    expect(calls.lease).toBe(2);
    // The sixth leaves 4 of 10 requests and 300 of 1,000 tokens held: below half a slice, both refill.
    const sixth = expectAllowed(limiter.reserve(key({ rpmLimit: 100, tpmLimit: 10_000, estimatedTokens: 200 })));
    expect(sixth.requests?.remaining).toBe(94);
    expect(sixth.tokens?.remaining).toBe(9_300);
    await limiter.drain();
    expect(calls.lease).toBe(4);
    // Next slices are 10% of what the store had left: 9 requests (100 - 10 = 90) and 900 tokens.
    expect(await storeUsed(shared, 'rpm:key_1', clock.time)).toBe(19);
    expect(await storeUsed(shared, 'tpm:key_1', clock.time)).toBe(1_900);
  });

  it('admits exactly the limit across limiters sharing a store, and never has two leases in flight per counter', async () => {
    const clock = testClock();
    const shared = createMemoryLimitStore();
    const observed = [0, 1, 2].map(() => observedStore(shared));
    const limiters = observed.map(({ store }) => createRateLimiter({ mode: 'leased', store, now: clock.now }));
    let admitted = 0;
    let synchronous = 0;
    await Promise.all(
      limiters.flatMap((limiter) =>
        Array.from({ length: 5 }, async () => {
          for (let round = 0; round < 60; round += 1) {
            const outcome = limiter.reserve(key({ rpmLimit: 97, tpmLimit: 50_000, estimatedTokens: 300 }));
            if (!(outcome instanceof Promise)) synchronous += 1;
            const answer = await outcome;
            if (answer.allowed) {
              admitted += 1;
              limiter.settle(answer, 300);
            }
            await new Promise((resolve) => setTimeout(resolve, 0));
          }
        }),
      ),
    );
    await Promise.all(limiters.map((limiter) => limiter.drain()));
    expect(admitted).toBe(97);
    expect(observed.map((store) => store.mostInFlight())).toEqual([1, 1, 1]);
    expect(await storeUsed(shared, 'rpm:key_1', clock.time)).toBe(97);
    expect(synchronous).toBeGreaterThan(97);
  });

  it('admits the whole limit to a burst arriving at once, one lease covering every waiting request', async () => {
    const clock = testClock();
    const shared = createMemoryLimitStore();
    const observed = [0, 1].map(() => observedStore(shared));
    const limiters = observed.map(({ store }) => createRateLimiter({ mode: 'leased', store, now: clock.now }));
    // 45 requests per process in the same tick, limit 30: slices are 3 units, so leasing a slice per wake-up would
    // leave most of the burst refused while the store still had units.
    const outcomes = await Promise.all(
      limiters.flatMap((limiter) =>
        Array.from({ length: 45 }, () =>
          limiter.reserve(key({ rpmLimit: 30, tpmLimit: 1_000_000, estimatedTokens: 100 })),
        ),
      ),
    );
    await Promise.all(limiters.map((limiter) => limiter.drain()));
    expect(outcomes.filter((outcome) => outcome.allowed)).toHaveLength(30);
    expect(await storeUsed(shared, 'rpm:key_1', clock.time)).toBe(30);
    expect(observed.map((store) => store.mostInFlight())).toEqual([1, 1]);
    expect(observed[0]!.calls.lease + observed[1]!.calls.lease).toBeLessThanOrEqual(12);
  });

  it('refuses from memory for recheckMs after the store said there is not enough, then asks again', async () => {
    const clock = testClock();
    const { store, calls } = observedStore();
    const other = createRateLimiter({ mode: 'leased', store, now: clock.now, sliceFraction: 1 });
    expect((await other.reserve(key({ rpmLimit: 5, estimatedTokens: 1 }))).allowed).toBe(true);
    const limiter = createRateLimiter({ mode: 'leased', store, now: clock.now, recheckMs: 1_000 });
    const refusal = await limiter.reserve(key({ rpmLimit: 5, estimatedTokens: 1 }));
    expect(refusal).toMatchObject({ allowed: false, limited: 'rpm', remaining: 0 });
    const leasesBefore = calls.lease;
    for (let index = 0; index < 50; index += 1)
      expectRefused(limiter.reserve(key({ rpmLimit: 5, estimatedTokens: 1 })));
    expect(calls.lease).toBe(leasesBefore);
    clock.time += 1_000;
    expect(limiter.reserve(key({ rpmLimit: 5, estimatedTokens: 1 }))).toBeInstanceOf(Promise);
  });

  it('keeps returned tokens up to two slices and gives the rest back to the store', async () => {
    const clock = testClock();
    const shared = createMemoryLimitStore();
    const limiter = createRateLimiter({ mode: 'leased', store: shared, now: clock.now });
    const reservation = await limiter.reserve(key({ rpmLimit: null, tpmLimit: 10_000, estimatedTokens: 5_000 }));
    if (!reservation.allowed) throw new Error('refused');
    // Leased 5,000 (the slice of 1,000 was smaller than the need), all given to the request, so a refill of 500
    // (10% of the 5,000 left) follows and is still in flight: all 4,990 returned tokens go back to the store.
    limiter.settle(reservation, 10);
    await limiter.drain();
    expect(await storeUsed(shared, 'tpm:key_1', clock.time)).toBe(510);
    // With no lease in flight, returned tokens are kept up to two slices held (one store call per request
    // otherwise); only what is above that goes back.
    const other = createMemoryLimitStore();
    const kept = createRateLimiter({ mode: 'leased', store: other, now: clock.now });
    const small = await kept.reserve(key({ rpmLimit: null, tpmLimit: 10_000, estimatedTokens: 100 }));
    if (!small.allowed) throw new Error('refused');
    // A slice of 1,000 leased, 900 held; the 100 returned are kept (a slice is now 900, two are 1,800).
    kept.settle(small, 0);
    await kept.drain();
    expect(await storeUsed(other, 'tpm:key_1', clock.time)).toBe(1_000);
    // 1,000 held, all reserved: the refill of 900 (10% of the 9,000 left) lands, 900 held, 1,900 used.
    const large = expectAllowed(kept.reserve(key({ rpmLimit: null, tpmLimit: 10_000, estimatedTokens: 1_000 })));
    await kept.drain();
    expect(await storeUsed(other, 'tpm:key_1', clock.time)).toBe(1_900);
    // Its 1,000 come back: two slices of 810 (10% of 8,100) are 1,620, so 720 are kept and 280 go back.
    kept.settle(large, 0);
    await kept.drain();
    expect(await storeUsed(other, 'tpm:key_1', clock.time)).toBe(1_620);
    expectAllowed(kept.reserve(key({ rpmLimit: null, tpmLimit: 10_000, estimatedTokens: 1_620 })));
  });

  it('charges tokens used beyond the estimate to the store', async () => {
    const clock = testClock();
    const shared = createMemoryLimitStore();
    const limiter = createRateLimiter({ mode: 'leased', store: shared, now: clock.now });
    const reservation = await limiter.reserve(key({ rpmLimit: null, tpmLimit: 10_000, estimatedTokens: 100 }));
    if (!reservation.allowed) throw new Error('refused');
    limiter.settle(reservation, 4_000);
    await limiter.drain();
    // 1,000 leased (held 900 after the reservation), the 3,900 extra take the 900 held and add 3,000.
    expect(await storeUsed(shared, 'tpm:key_1', clock.time)).toBe(4_000);
  });

  it('gives held slices back to the store when a key is evicted', async () => {
    const clock = testClock();
    const shared = createMemoryLimitStore();
    const limiter = createRateLimiter({ mode: 'leased', store: shared, now: clock.now, maxKeys: 1 });
    await limiter.reserve(key({ keyId: 'a', rpmLimit: 100, tpmLimit: null }));
    expect(await storeUsed(shared, 'rpm:a', clock.time)).toBe(10);
    await limiter.reserve(key({ keyId: 'b', rpmLimit: 100, tpmLimit: null }));
    await limiter.drain();
    expect(await storeUsed(shared, 'rpm:a', clock.time)).toBe(1);
  });

  it('counts locally, bounded by the remainder it last saw, when the store fails', async () => {
    const clock = testClock();
    const errors: string[] = [];
    const failing: LimitStore = {
      lease: () => Promise.reject(new Error('store down')),
      release: () => Promise.reject(new Error('store down')),
      add: () => Promise.reject(new Error('store down')),
    };
    const limiter = createRateLimiter({
      mode: 'leased',
      store: failing,
      now: clock.now,
      storeRetryMs: 120_000,
      onStoreError: (_error, counter) => errors.push(counter),
    });
    expect((await limiter.reserve(key({ rpmLimit: 2, tpmLimit: null }))).allowed).toBe(true);
    expectAllowed(limiter.reserve(key({ rpmLimit: 2, tpmLimit: null })));
    expectRefused(limiter.reserve(key({ rpmLimit: 2, tpmLimit: null })));
    expect(errors).toEqual(['rpm:key_1']);
    // Within the back-off a new window starts counting locally at once, without asking the store.
    clock.time = windowOf(clock.time) + 60_000;
    expectAllowed(limiter.reserve(key({ rpmLimit: 2, tpmLimit: null })));
    expect(errors).toHaveLength(1);
  });

  it('treats a store slower than leaseTimeoutMs as failed', async () => {
    const slow: LimitStore = {
      lease: () => new Promise<LimitLease>(() => {}),
      release: () => Promise.resolve(),
      add: () => Promise.resolve(),
    };
    const errors: unknown[] = [];
    const limiter = createRateLimiter({
      mode: 'leased',
      store: slow,
      leaseTimeoutMs: 20,
      onStoreError: (error) => errors.push(error),
    });
    expect((await limiter.reserve(key())).allowed).toBe(true);
    expect(String(errors[0])).toContain('did not answer within 20 ms');
  });
});

describe('createRateLimiter: strict mode', () => {
  it('asks the store for every request and admits exactly the limit', async () => {
    const clock = testClock();
    const { store, calls } = observedStore();
    const limiters: RateLimiter[] = [0, 1].map(() => createRateLimiter({ mode: 'strict', store, now: clock.now }));
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_unused, index) => {
        const pending = (limiters[index % 2] as RateLimiter).reserve(key({ rpmLimit: 7, tpmLimit: null }));
        expect(pending).toBeInstanceOf(Promise);
        return pending;
      }),
    );
    expect(outcomes.filter((outcome) => outcome.allowed)).toHaveLength(7);
    expect(calls.lease).toBe(12);
    const last = outcomes.find((outcome) => outcome.allowed && outcome.requests?.remaining === 0);
    expect(last).toBeDefined();
  });

  it('gives the request back when the tokens are refused, and settles the difference in the store', async () => {
    const clock = testClock();
    const shared = createMemoryLimitStore();
    const limiter = createRateLimiter({ mode: 'strict', store: shared, now: clock.now });
    const reservation = await limiter.reserve(key({ rpmLimit: 5, tpmLimit: 1_000, estimatedTokens: 800 }));
    if (!reservation.allowed) throw new Error('refused');
    const refusal = await limiter.reserve(key({ rpmLimit: 5, tpmLimit: 1_000, estimatedTokens: 300 }));
    expect(refusal).toMatchObject({ allowed: false, limited: 'tpm', remaining: 200, requested: 300 });
    await limiter.drain();
    expect(await storeUsed(shared, 'rpm:key_1', clock.time)).toBe(1);
    limiter.settle(reservation, 500);
    await limiter.drain();
    expect(await storeUsed(shared, 'tpm:key_1', clock.time)).toBe(500);
    const after = await limiter.reserve(key({ rpmLimit: 5, tpmLimit: 1_000, estimatedTokens: 300 }));
    expect(after).toMatchObject({ allowed: true, requests: { remaining: 3 }, tokens: { remaining: 200 } });
  });

  it('needs a store', () => {
    expect(() => createRateLimiter({ mode: 'strict' })).toThrow('needs a shared limit store');
  });
});
