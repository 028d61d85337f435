import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isGatewayError } from '../errors.ts';
import { testStoreDrivers, type TestStores } from '../../tests/services/test-database.ts';

// The KeyStore conformance cases, on the Drizzle store over Postgres and PGlite and the SQLite store
// (./sqlite-key-store.ts).
describe.each(testStoreDrivers)('key store on $driver', ({ create }) => {
  let stores: TestStores;
  let clock = Date.UTC(2025, 0, 1);
  const now = () => clock;
  let counter = 0;
  const fresh = () => {
    counter += 1;
    return { id: `key_${counter}`, hash: counter.toString(16).padStart(64, '0'), prefix: `sk-torii-${counter}` };
  };

  beforeAll(async () => {
    stores = await create();
  }, 60_000);
  afterAll(() => stores?.drop());

  it('creates a key with defaults and finds it by id and hash', async () => {
    const store = stores.keyStore({ now });
    const identity = fresh();
    const created = await store.create({ ...identity, name: 'ci' });
    expect(created).toEqual({
      ...identity,
      name: 'ci',
      owner: null,
      team: null,
      metadata: {},
      allowedModelGroups: null,
      rpmLimit: null,
      tpmLimit: null,
      budget: null,
      expiresAt: null,
      disabled: false,
      revokedAt: null,
      version: 1,
      createdAt: clock,
      updatedAt: clock,
    });
    expect(await store.findById(identity.id)).toEqual(created);
    expect(await store.findByHash(identity.hash)).toEqual(created);
    expect(await store.findById('key_missing')).toBeUndefined();
    expect(await store.findByHash('0'.repeat(64))).toBeUndefined();
  });

  it('finds many keys by hash in one query, leaving unknown hashes out', async () => {
    const store = stores.keyStore({ now });
    const created = await Promise.all(
      [fresh(), fresh(), fresh()].map((identity) => store.create({ ...identity, name: 'many' })),
    );
    const unknown = Array.from({ length: 497 }, (_, index) => `f${index.toString(16).padStart(63, '0')}`);
    const found = await store.findManyByHash([
      ...unknown.slice(0, 200),
      created[2]!.hash,
      created[0]!.hash,
      ...unknown.slice(200),
      created[1]!.hash,
      created[0]!.hash,
    ]);
    expect(found).toHaveLength(3);
    expect(found).toEqual(expect.arrayContaining(created));
    expect(await store.findManyByHash(unknown)).toEqual([]);
    expect(await store.findManyByHash([])).toEqual([]);
  });

  it('stores every field of a key and reads it back unchanged', async () => {
    const store = stores.keyStore({ now });
    const identity = fresh();
    const fields = {
      name: 'batch "jobs", {nightly}',
      owner: 'user_1',
      team: 'research',
      metadata: { cost_center: '42', note: 'quotes " and \\ backslash' },
      allowedModelGroups: ['gpt-4o', 'claude "sonnet"', 'NULL', 'a,b'],
      rpmLimit: 60,
      tpmLimit: 100_000,
      budget: { amountUsd: 12.34, period: 'month' as const },
      expiresAt: Date.UTC(2026, 5, 30, 12, 0, 0, 123),
    };
    const created = await store.create({ ...identity, ...fields });
    expect(created).toMatchObject(fields);
    expect(await store.findByHash(identity.hash)).toEqual(created);
  });

  it('refuses a second key with the same hash', async () => {
    const store = stores.keyStore({ now });
    const first = fresh();
    await store.create({ ...first, name: 'one' });
    await expect(store.create({ ...fresh(), hash: first.hash, name: 'two' })).rejects.toThrow();
  });

  it('updates only the fields given, clears fields set to null and bumps the version', async () => {
    const store = stores.keyStore({ now });
    const identity = fresh();
    const created = await store.create({
      ...identity,
      name: 'before',
      owner: 'user_1',
      rpmLimit: 10,
      budget: { amountUsd: 5, period: 'day' },
    });
    clock += 1_000;
    const updated = await store.update(identity.id, { name: 'after', rpmLimit: null, budget: null, disabled: true });
    expect(updated).toEqual({
      ...created,
      name: 'after',
      rpmLimit: null,
      budget: null,
      disabled: true,
      version: 2,
      updatedAt: clock,
    });
    expect(await store.findById(identity.id)).toEqual(updated);
    const again = await store.update(identity.id, { budget: { amountUsd: 1.5, period: 'total' }, disabled: false });
    expect(again).toMatchObject({ budget: { amountUsd: 1.5, period: 'total' }, disabled: false, version: 3 });
  });

  it('leaves the version alone when there is nothing to change, and answers undefined for an unknown key', async () => {
    const store = stores.keyStore({ now });
    const identity = fresh();
    const created = await store.create({ ...identity, name: 'same' });
    expect(await store.update(identity.id, {})).toEqual(created);
    expect(await store.update('key_missing', { name: 'x' })).toBeUndefined();
  });

  it('bumps the version once per change even when changes race', async () => {
    const store = stores.keyStore({ now });
    const identity = fresh();
    await store.create({ ...identity, name: 'raced' });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, index) => store.update(identity.id, { rpmLimit: index + 1 })),
    );
    expect(results.map((result) => result?.version).sort((left, right) => left! - right!)).toEqual(
      Array.from({ length: 12 }, (_, index) => index + 2),
    );
    expect((await store.findById(identity.id))?.version).toBe(13);
  });

  it('revokes once: a second revoke keeps the first time and version', async () => {
    const store = stores.keyStore({ now });
    const identity = fresh();
    await store.create({ ...identity, name: 'to revoke' });
    clock += 1_000;
    const revokedAt = clock;
    const revoked = await store.revoke(identity.id);
    expect(revoked).toMatchObject({ revokedAt, version: 2, updatedAt: revokedAt });
    clock += 1_000;
    expect(await store.revoke(identity.id)).toEqual(revoked);
    expect(await store.findByHash(identity.hash)).toEqual(revoked);
    expect(await store.revoke('key_missing')).toBeUndefined();
  });

  it('rotates a key to a new hash and prefix, and refuses to rotate a revoked one', async () => {
    const store = stores.keyStore({ now });
    const identity = fresh();
    await store.create({ ...identity, name: 'rotated' });
    const replacement = { hash: 'f'.repeat(63) + String(counter % 10), prefix: 'sk-torii-new' };
    clock += 1_000;
    const rotated = await store.rotate(identity.id, replacement);
    expect(rotated).toMatchObject({ id: identity.id, ...replacement, version: 2, updatedAt: clock });
    expect(await store.findByHash(identity.hash)).toBeUndefined();
    expect(await store.findByHash(replacement.hash)).toEqual(rotated);

    await store.revoke(identity.id);
    expect(await store.rotate(identity.id, { hash: 'e'.repeat(64), prefix: 'sk-torii-late' })).toBeUndefined();
    expect(await store.findByHash('e'.repeat(64))).toBeUndefined();
    expect((await store.findById(identity.id))?.hash).toBe(replacement.hash);
    expect(await store.rotate('key_missing', { hash: 'd'.repeat(64), prefix: 'x' })).toBeUndefined();
  });

  describe('list', () => {
    // Listed keys live under their own owner names, so other tests' keys never show up in these pages.
    const listed: string[] = [];
    beforeAll(async () => {
      const store = stores.keyStore({ now: () => listClock });
      let listClock = Date.UTC(2025, 5, 1);
      // 11 keys; keys 3-5 share one creation time, so the id breaks the tie.
      for (let index = 0; index < 11; index += 1) {
        if (index !== 4 && index !== 5) listClock += 1_000;
        const identity = fresh();
        await store.create({
          ...identity,
          name: `listed ${index}`,
          owner: index % 2 === 0 ? 'list-even' : 'list-odd',
          team: index < 6 ? 'list-team-a' : 'list-team-b',
        });
        listed.push(identity.id);
      }
    });

    const readAll = async (filter: { owner?: string; team?: string }, limit: number) => {
      const store = stores.keyStore({ now });
      const ids: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await store.list({ ...filter, limit, cursor });
        expect(page.keys.length).toBeLessThanOrEqual(limit);
        ids.push(...page.keys.map((key) => key.id));
        cursor = page.nextCursor;
        pages += 1;
      } while (cursor !== undefined && pages < 100);
      return { ids, pages };
    };

    /** Newest first; equal creation times by id descending (`key_9` > `key_10` as text). */
    const expected = (ids: string[], createdAt: (id: string) => number) =>
      [...ids].sort((left, right) => createdAt(right) - createdAt(left) || (right > left ? 1 : right < left ? -1 : 0));

    it('pages through keys newest first, with no key twice or missing', async () => {
      const store = stores.keyStore({ now });
      const records = await Promise.all(listed.map((id) => store.findById(id)));
      const createdAt = new Map(records.map((record) => [record!.id, record!.createdAt]));
      const even = listed.filter((_, index) => index % 2 === 0);
      const { ids, pages } = await readAll({ owner: 'list-even' }, 2);
      expect(ids).toEqual(expected(even, (id) => createdAt.get(id)!));
      expect(pages).toBe(3);

      const byTeam = await readAll({ team: 'list-team-a' }, 4);
      expect(byTeam.ids).toEqual(expected(listed.slice(0, 6), (id) => createdAt.get(id)!));
      expect(byTeam.pages).toBe(2);

      const both = await readAll({ owner: 'list-odd', team: 'list-team-b' }, 1);
      expect(both.ids).toEqual(expected([listed[7]!, listed[9]!], (id) => createdAt.get(id)!));
    });

    it('lists every key without filters, and the last page has no cursor', async () => {
      const store = stores.keyStore({ now });
      const { ids } = await readAll({}, 100);
      expect(ids).toEqual(expect.arrayContaining(listed));
      const exact = await store.list({ owner: 'list-odd', limit: 5 });
      expect(exact.keys).toHaveLength(5);
      expect(exact.nextCursor).toBeUndefined();
      expect(await store.list({ owner: 'nobody', limit: 5 })).toEqual({ keys: [], nextCursor: undefined });
    });

    it('refuses a limit outside 1..100 and a cursor it did not issue, as 400s', async () => {
      const store = stores.keyStore({ now });
      for (const limit of [0, 101, 2.5, Number.NaN]) {
        const error = await store.list({ limit }).catch((caught: unknown) => caught);
        expect(isGatewayError(error) && error.status === 400 && error.param === 'limit').toBe(true);
      }
      for (const cursor of ['', 'not a cursor', btoa('x.key_1'), btoa('12.')]) {
        const error = await store.list({ limit: 5, cursor }).catch((caught: unknown) => caught);
        expect(isGatewayError(error) && error.status === 400 && error.param === 'cursor').toBe(true);
      }
    });
  });
});
