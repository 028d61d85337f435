/**
 * The one conformance suite of the `ResponseStore` seam (src/responses/response-store.ts). Every implementation calls
 * {@link describeResponseStoreConformance} from the test beside it: Drizzle on PGlite and on Postgres
 * (src/db/drizzle-response-store.test.ts), the Worker's (a connection per call, in Node against the test Postgres:
 * adapters/cloudflare/worker-database-stores.test.ts) and the Node cluster worker's remote store, through the
 * primary's real RPC server over an in-process channel that carries JSON
 * (adapters/node/cluster-remote-services.test.ts).
 *
 * Expiry is tested on a clock each test moves itself, handed to the subject when it makes a store; the stores of one
 * subject share their storage, so every test uses ids of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResponseStore, StoredResponse } from '../../src/responses/response-store.ts';

/** A store under test. */
export interface ResponseStoreSubject {
  /** A store reading `now` as its clock (epoch ms). Called once or more per test; every store sees the same rows. */
  createStore(now: () => number): ResponseStore;
  /** Releases connections and databases. */
  close(): Promise<void>;
}

const day = 86_400_000;
const start = Date.UTC(2026, 0, 15, 9, 30, 0, 123);

/** A test's own ids (`resp_<test>_<name>`) and a clock it moves. */
function scene(): { id(name: string): string; clock: { now: number }; now: () => number } {
  const prefix = `resp_${crypto.randomUUID().replaceAll('-', '')}`;
  const clock = { now: start };
  return { id: (name) => `${prefix}_${name}`, clock, now: () => clock.now };
}

/** A translated response with plausible items; `overrides` replace fields. */
function translated(id: string, overrides: Partial<StoredResponse> = {}): StoredResponse {
  return {
    id,
    keyId: 'key_a',
    modelGroup: 'fast',
    deploymentId: 'fast/0',
    native: false,
    previousResponseId: null,
    inputItems: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: `question of ${id}` }] }],
    response: {
      id,
      object: 'response',
      status: 'completed',
      output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `answer of ${id}` }] }],
      usage: { input_tokens: 12, output_tokens: 3, total_tokens: 15 },
    },
    createdAt: start,
    expiresAt: start + 30 * day,
    ...overrides,
  };
}

/** Puts `count` responses, each continuing the one before; answers their ids, oldest first. */
async function putChain(store: ResponseStore, id: (name: string) => string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, index) => id(`link${index}`));
  for (const [index, linkId] of ids.entries()) {
    await store.put(translated(linkId, { previousResponseId: index === 0 ? null : ids[index - 1]! }));
  }
  return ids;
}

const idsOf = (responses: readonly StoredResponse[]) => responses.map((response) => response.id);

/**
 * Defines the conformance tests for one `ResponseStore` implementation.
 *
 * @example
 * ```ts
 * describeResponseStoreConformance('drizzle on pglite', async () => {
 *   const database = await createTestPglite();
 *   return { createStore: (now) => createDrizzleResponseStore(database.db, { now }), close: () => database.drop() };
 * });
 * ```
 */
export function describeResponseStoreConformance(name: string, open: () => Promise<ResponseStoreSubject>): void {
  describe(`ResponseStore conformance: ${name}`, () => {
    let subject: ResponseStoreSubject;

    beforeAll(async () => {
      subject = await open();
    }, 120_000);

    afterAll(async () => {
      await subject?.close();
    }, 60_000);

    it('gives back every field of a translated response as it was put', async () => {
      const { id, now } = scene();
      const store = subject.createStore(now);
      const response = translated(id('full'), {
        keyId: 'key_b',
        modelGroup: 'group "with" quotes',
        deploymentId: 'group "with" quotes/3',
        previousResponseId: id('earlier'),
        inputItems: [
          { type: 'message', role: 'system', content: 'be brief' },
          { type: 'function_call_output', call_id: 'call_1', output: '{"ok":true}' },
          { type: 'reasoning', summary: [], encrypted_content: null, nested: { deep: [1, 2.5, -0.125, true, null] } },
        ],
        createdAt: start + 7,
        expiresAt: start + 7 + 12 * day + 999,
      });
      await store.put(response);
      expect(await store.get(response.id)).toEqual(response);
    });

    it('gives back a native response: no items, no Response object, no key', async () => {
      const { id, now } = scene();
      const store = subject.createStore(now);
      const response: StoredResponse = {
        id: id('native'),
        keyId: null,
        modelGroup: 'openai',
        deploymentId: 'openai/1',
        native: true,
        previousResponseId: null,
        inputItems: [],
        response: null,
        createdAt: start,
        expiresAt: start + day,
      };
      await store.put(response);
      expect(await store.get(response.id)).toEqual(response);
    });

    it('answers undefined for an id never put', async () => {
      const { id, now } = scene();
      const store = subject.createStore(now);
      expect(await store.get(id('missing'))).toBeUndefined();
      expect(await store.get('')).toBeUndefined();
    });

    it('keeps unicode, deep nesting and a 1 MB payload unchanged', async () => {
      const { id, now } = scene();
      const store = subject.createStore(now);
      const text = 'héllo wörld 日本語 👩‍👩‍👧‍👦 🇯🇵 e\u0301 "quotes" \\ back\\slash \\u0041 \n\t\r line breaks';
      let nested: Record<string, unknown> = { leaf: text };
      for (let level = 0; level < 100; level++) nested = { level, child: nested, list: [level, { text }] };
      const big = 'x'.repeat(1024 * 1024);
      const response = translated(id('json'), {
        inputItems: [
          { type: 'message', role: 'user', content: text, [`key ${text}`]: 'a key with unicode' },
          { type: 'input_file', data: big },
        ],
        response: { id: id('json'), nested, output: [{ text: big.slice(0, 1000) + text }], empty: {}, none: [] },
      });
      await store.put(response);
      expect(await store.get(response.id)).toEqual(response);
      expect((await store.chain(response.id, 1))[0]).toEqual(response);
    });

    it('treats a response as gone from its expiry on, for get, chain and delete', async () => {
      const { id, clock, now } = scene();
      const store = subject.createStore(now);
      const response = translated(id('expiring'), { expiresAt: start + 60_000 });
      await store.put(response);
      clock.now = start + 59_999;
      expect(await store.get(response.id)).toEqual(response);
      expect(idsOf(await store.chain(response.id, 10))).toEqual([response.id]);
      clock.now = start + 60_000;
      expect(await store.get(response.id)).toBeUndefined();
      expect(await store.chain(response.id, 10)).toEqual([]);
      expect(await store.delete(response.id)).toBe(false);
    });

    it('walks a chain newest first', async () => {
      const { id, now } = scene();
      const store = subject.createStore(now);
      const [first, second, third] = await putChain(store, id, 3);
      expect(idsOf(await store.chain(third!, 10))).toEqual([third, second, first]);
      expect(idsOf(await store.chain(second!, 10))).toEqual([second, first]);
      expect(idsOf(await store.chain(first!, 10))).toEqual([first]);
      const chain = await store.chain(third!, 10);
      expect(chain[1]).toEqual(translated(second!, { previousResponseId: first! }));
    });

    it('answers an empty chain for a missing id', async () => {
      const { id, now } = scene();
      const store = subject.createStore(now);
      expect(await store.chain(id('missing'), 10)).toEqual([]);
    });

    it('stops a chain at a missing link and at an expired one', async () => {
      const { id, clock, now } = scene();
      const store = subject.createStore(now);
      await store.put(translated(id('orphan'), { previousResponseId: id('never-put') }));
      expect(idsOf(await store.chain(id('orphan'), 10))).toEqual([id('orphan')]);

      await store.put(translated(id('old'), { expiresAt: start + 1_000 }));
      await store.put(translated(id('middle'), { previousResponseId: id('old'), expiresAt: start + 2_000 }));
      await store.put(translated(id('new'), { previousResponseId: id('middle') }));
      expect(idsOf(await store.chain(id('new'), 10))).toEqual([id('new'), id('middle'), id('old')]);
      clock.now = start + 1_500;
      expect(idsOf(await store.chain(id('new'), 10))).toEqual([id('new'), id('middle')]);
      clock.now = start + 2_000;
      expect(idsOf(await store.chain(id('new'), 10))).toEqual([id('new')]);
    });

    it('returns at most maxLength responses', async () => {
      const { id, now } = scene();
      const store = subject.createStore(now);
      const ids = (await putChain(store, id, 5)).reverse();
      expect(idsOf(await store.chain(ids[0]!, 2))).toEqual(ids.slice(0, 2));
      expect(idsOf(await store.chain(ids[0]!, 1))).toEqual(ids.slice(0, 1));
      expect(idsOf(await store.chain(ids[0]!, 5))).toEqual(ids);
      expect(idsOf(await store.chain(ids[0]!, 6))).toEqual(ids);
      expect(await store.chain(ids[0]!, 0)).toEqual([]);
    });

    it('walks a chain of 200 responses in one call', async () => {
      const { id, now } = scene();
      const store = subject.createStore(now);
      const ids = (await putChain(store, id, 200)).reverse();
      const chain = await store.chain(ids[0]!, 200);
      expect(idsOf(chain)).toEqual(ids);
      expect(chain[199]).toEqual(translated(ids[199]!));
      expect(idsOf(await store.chain(ids[0]!, 150))).toEqual(ids.slice(0, 150));
    }, 60_000);

    it('deletes a response once: true, then false; a deleted response is gone from chains', async () => {
      const { id, now } = scene();
      const store = subject.createStore(now);
      const [first, second, third] = await putChain(store, id, 3);
      expect(await store.delete(second!)).toBe(true);
      expect(await store.delete(second!)).toBe(false);
      expect(await store.delete(id('never-put'))).toBe(false);
      expect(await store.get(second!)).toBeUndefined();
      expect(idsOf(await store.chain(third!, 10))).toEqual([third]);
      expect(await store.chain(second!, 10)).toEqual([]);
      expect(idsOf(await store.chain(first!, 10))).toEqual([first]);
    });

    it('replaces a response put again under the same id, links included', async () => {
      const { id, now } = scene();
      const store = subject.createStore(now);
      await store.put(translated(id('a')));
      await store.put(translated(id('b')));
      await store.put(translated(id('c'), { previousResponseId: id('a') }));
      const replacement = translated(id('c'), {
        keyId: null,
        deploymentId: 'fast/1',
        native: true,
        previousResponseId: id('b'),
        inputItems: [],
        response: null,
        createdAt: start + 5,
        expiresAt: start + day,
      });
      await store.put(replacement);
      expect(await store.get(id('c'))).toEqual(replacement);
      expect(idsOf(await store.chain(id('c'), 10))).toEqual([id('c'), id('b')]);
    });

    it('lets every store of the subject see the same rows', async () => {
      const { id, now } = scene();
      const writer = subject.createStore(now);
      const reader = subject.createStore(now);
      await writer.put(translated(id('shared')));
      expect(await reader.get(id('shared'))).toEqual(translated(id('shared')));
      expect(await reader.delete(id('shared'))).toBe(true);
      expect(await writer.get(id('shared'))).toBeUndefined();
    });
  });
}
