import { describe, expect, it } from 'vitest';
import {
  accessTokenFailureBackoffMs,
  createAccessTokenCache,
  sharedAccessTokenCache,
  sharedAccessTokenCacheLimit,
  type AccessToken,
} from './access-token-cache.ts';

const hour = 3_600_000;
const minute = 60_000;

/** A fake clock and a token source that counts its calls and resolves only when the test says so. */
function harness(lifetimeMs = hour) {
  let time = 1_000_000;
  let calls = 0;
  const pending: { resolve: (token: AccessToken) => void; reject: (error: unknown) => void }[] = [];
  const fetchToken = () => {
    calls += 1;
    return new Promise<AccessToken>((resolve, reject) => pending.push({ resolve, reject }));
  };
  return {
    now: () => time,
    advance: (ms: number) => {
      time += ms;
    },
    fetchToken,
    calls: () => calls,
    /** Resolves the oldest pending fetch with `token-<n>` valid for the lifetime from now. */
    resolveNext(token = `token-${calls}`) {
      const next = pending.shift();
      if (next === undefined) throw new Error('no fetch pending');
      next.resolve({ token, expiresAt: time + lifetimeMs });
    },
    rejectNext(error: unknown) {
      const next = pending.shift();
      if (next === undefined) throw new Error('no fetch pending');
      next.reject(error);
    },
  };
}

/** Lets promise callbacks run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('createAccessTokenCache', () => {
  it('shares one fetch among concurrent first callers', async () => {
    const h = harness();
    const cache = createAccessTokenCache({ fetchToken: h.fetchToken, now: h.now });
    const gets = Array.from({ length: 20 }, () => cache.get());
    expect(h.calls()).toBe(1);
    h.resolveNext('first');
    expect(await Promise.all(gets)).toEqual(Array.from({ length: 20 }, () => 'first'));
    expect(await cache.get()).toBe('first');
    expect(h.calls()).toBe(1);
  });

  it('refreshes once inside the refresh margin, serving the still-valid token meanwhile', async () => {
    const h = harness();
    const cache = createAccessTokenCache({ fetchToken: h.fetchToken, now: h.now });
    const first = cache.get();
    h.resolveNext('first');
    expect(await first).toBe('first');

    h.advance(hour - 6 * minute);
    expect(await cache.get()).toBe('first');
    expect(h.calls()).toBe(1);

    h.advance(2 * minute); // 4 minutes left: inside the default 5-minute margin
    expect(await Promise.all([cache.get(), cache.get(), cache.get()])).toEqual(['first', 'first', 'first']);
    expect(h.calls()).toBe(2);
    h.resolveNext('second');
    await settle();
    expect(await cache.get()).toBe('second');
    expect(h.calls()).toBe(2);
  });

  it('caps the margin at half the lifetime of a short-lived token', async () => {
    const h = harness(4 * minute);
    const cache = createAccessTokenCache({ fetchToken: h.fetchToken, now: h.now });
    const first = cache.get();
    h.resolveNext('first');
    await first;
    h.advance(minute + 59_000); // before half-life: no refresh even though inside 5 minutes of expiry
    await cache.get();
    expect(h.calls()).toBe(1);
    h.advance(2_000);
    await cache.get();
    expect(h.calls()).toBe(2);
  });

  it('never returns an expired token: callers wait for the fetch', async () => {
    const h = harness();
    const cache = createAccessTokenCache({ fetchToken: h.fetchToken, now: h.now, refreshMarginMs: 0 });
    const first = cache.get();
    h.resolveNext('first');
    await first;
    h.advance(hour);
    const waiting = cache.get();
    let settled = false;
    void waiting.then(() => (settled = true));
    await settle();
    expect(settled).toBe(false);
    h.resolveNext('second');
    expect(await waiting).toBe('second');
  });

  it('rejects every waiter with the failure, remembers it briefly, then fetches again', async () => {
    const h = harness();
    const cache = createAccessTokenCache({ fetchToken: h.fetchToken, now: h.now });
    const gets = [cache.get(), cache.get(), cache.get()];
    const failure = new Error('token endpoint down');
    h.rejectNext(failure);
    for (const get of gets) await expect(get).rejects.toBe(failure);
    expect(h.calls()).toBe(1);

    await expect(cache.get()).rejects.toBe(failure);
    expect(h.calls()).toBe(1);

    h.advance(accessTokenFailureBackoffMs);
    const retry = cache.get();
    expect(h.calls()).toBe(2);
    h.resolveNext('recovered');
    expect(await retry).toBe('recovered');
  });

  it('keeps the old token when a background refresh fails, and retries after the backoff', async () => {
    const h = harness();
    const cache = createAccessTokenCache({ fetchToken: h.fetchToken, now: h.now });
    const first = cache.get();
    h.resolveNext('first');
    await first;
    h.advance(hour - minute);
    expect(await cache.get()).toBe('first');
    h.rejectNext(new Error('blip'));
    await settle();
    expect(await cache.get()).toBe('first');
    expect(h.calls()).toBe(2);
    h.advance(accessTokenFailureBackoffMs);
    expect(await cache.get()).toBe('first');
    expect(h.calls()).toBe(3);
  });

  it('rejects a token that has already expired', async () => {
    const cache = createAccessTokenCache({
      fetchToken: async () => ({ token: 'stale', expiresAt: 5 }),
      now: () => 10,
    });
    await expect(cache.get()).rejects.toThrow('already expired');
  });

  it('invalidate drops the token so the next call fetches', async () => {
    const h = harness();
    const cache = createAccessTokenCache({ fetchToken: h.fetchToken, now: h.now });
    const first = cache.get();
    h.resolveNext('first');
    await first;
    cache.invalidate();
    const next = cache.get();
    expect(h.calls()).toBe(2);
    h.resolveNext('second');
    expect(await next).toBe('second');
  });

  it('invalidate with a rejected token keeps a newer one', async () => {
    const h = harness();
    const cache = createAccessTokenCache({ fetchToken: h.fetchToken, now: h.now });
    const first = cache.get();
    h.resolveNext('first');
    await first;
    cache.invalidate('first');
    const second = cache.get();
    h.resolveNext('second');
    await second;
    cache.invalidate('first'); // a late 401 for the old token
    expect(await cache.get()).toBe('second');
    expect(h.calls()).toBe(2);
  });
});

describe('sharedAccessTokenCache', () => {
  it('shares one cache per key and uses the newest token source', async () => {
    const key = `test-shared-${Math.random()}`;
    let calls = 0;
    const a = sharedAccessTokenCache(key, {
      fetchToken: async () => ({ token: `a-${++calls}`, expiresAt: Date.now() + hour }),
    });
    const b = sharedAccessTokenCache(key, {
      fetchToken: async () => ({ token: `b-${++calls}`, expiresAt: Date.now() + hour }),
    });
    const [fromA, fromB] = await Promise.all([a.get(), b.get()]);
    expect(fromA).toBe('b-1');
    expect(fromB).toBe('b-1');
    expect(calls).toBe(1);
  });

  it('is bounded: the least recently used key is dropped', async () => {
    const prefix = `test-bounded-${Math.random()}`;
    let calls = 0;
    const options = { fetchToken: async () => ({ token: `t-${++calls}`, expiresAt: Date.now() + hour }) };
    await sharedAccessTokenCache(`${prefix}-0`, options).get();
    for (let index = 1; index <= sharedAccessTokenCacheLimit; index += 1) {
      await sharedAccessTokenCache(`${prefix}-${index}`, options).get();
    }
    const before = calls;
    await sharedAccessTokenCache(`${prefix}-0`, options).get();
    expect(calls).toBe(before + 1);
    await sharedAccessTokenCache(`${prefix}-${sharedAccessTokenCacheLimit}`, options).get();
    expect(calls).toBe(before + 1);
  });
});
