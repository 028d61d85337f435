import postgres from 'postgres';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateVirtualKeySecret, isWellFormedVirtualKeySecret } from '../../src/auth/virtual-key-secret.ts';
import { startTestPostgres, type TestPostgresServer } from '../services/postgres-server.ts';
import { createVirtualKey, startAccountingGateway, waitFor, type IssuedKey } from './accounting-harness.ts';
import type { RunningGateway } from './gateway-process.ts';

/**
 * Issue 8, item 11, through the built Node server (a cluster of two workers, no Redis: workers reach the database
 * through the primary): a flood of distinct forged well-formed keys must not become one Postgres query each.
 *
 * To make the flood meet the limits on any machine, however fast its Postgres answers, the test holds an
 * `access exclusive` lock on `virtual_keys` while the flood arrives: every key query the gateway sends waits on it.
 * While the lock is held, Postgres must see at most `TORII_KEY_LOOKUP_CONCURRENCY` (4) key queries from the whole
 * host, each worker must queue at most `TORII_KEY_LOOKUP_QUEUE_MAX` unknown keys and refuse the rest with 503
 * `key_lookup_busy`, and keys already cached must keep getting 200. Once the lock is released, the queued keys are
 * looked up in batches: the queries, counted by `pg_stat_statements`, stay within ceil(forged / 500) + 4.
 */

const workers = 2;
const maxConcurrent = 4;
const maxQueued = 1_000;
const forgedCount = 20_000;
/** The requests the gateway holds while the table is locked: per worker, the lookups in flight and the queue. */
const heldRequests = workers * (maxConcurrent + maxQueued);
const keyQueryPattern = 'select %from "virtual_keys" where "virtual_keys"."key_hash" = %';

interface Answer {
  status: number;
  code: string | null;
  retryAfter: string | undefined;
  answeredWhileLocked: boolean;
}

describe('a flood of forged keys against the Node cluster (Postgres, no Redis)', { timeout: 120_000 }, () => {
  let database: TestPostgresServer;
  let gateway: RunningGateway;
  let observer: postgres.Sql;

  beforeAll(async () => {
    // A server of the test's own, with pg_stat_statements loaded to count every statement exactly.
    database = await startTestPostgres({ settings: { shared_preload_libraries: 'pg_stat_statements' } });
    observer = postgres(database.url, { max: 2, onnotice: () => {} });
    await observer`create extension if not exists pg_stat_statements`;
    gateway = await startAccountingGateway({
      mockUrl: 'http://127.0.0.1:9',
      databaseUrl: database.url,
      workers,
      environment: {
        TORII_KEY_LOOKUP_CONCURRENCY: String(maxConcurrent),
        TORII_KEY_LOOKUP_QUEUE_MAX: String(maxQueued),
      },
    });
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await observer?.end({ timeout: 5 });
    await database?.stop();
  }, 120_000);

  const keyQueries = async (): Promise<number> => {
    const [row] = await observer<{ calls: string }[]>`
      select coalesce(sum(calls), 0)::text as calls from pg_stat_statements where query ilike ${keyQueryPattern}`;
    return Number(row?.calls ?? 0);
  };

  const keyQueriesWaitingOnTheLock = async (): Promise<number> => {
    const [row] = await observer<{ waiting: number }[]>`
      select count(*)::int as waiting from pg_stat_activity
      where wait_event_type = 'Lock' and query ilike ${keyQueryPattern}`;
    return row?.waiting ?? 0;
  };

  it('bounds the queries, refuses past the queue with 503, and valid keys get 200 throughout', async () => {
    const warm: IssuedKey[] = [];
    const cold: IssuedKey[] = [];
    for (let index = 0; index < 5; index++) {
      warm.push(await createVirtualKey(gateway, { name: `warm-${index}` }));
      cold.push(await createVirtualKey(gateway, { name: `cold-${index}` }));
    }
    // Enough connections that each worker can be sent more than it holds, however the cluster spreads them.
    const pool = new Pool(gateway.baseURL, { connections: 2 * heldRequests + 1_000, pipelining: 1 });
    const models = async (apiKey: string) => {
      const response = await pool.request({
        path: '/v1/models',
        method: 'GET',
        headers: { authorization: `Bearer ${apiKey}` },
      });
      const body = (await response.body.json()) as { error?: { code: string | null } };
      const retryAfter = response.headers['retry-after'];
      return {
        status: response.statusCode,
        code: body.error?.code ?? null,
        retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
      };
    };
    // Warm: looked up once, so the record is in the primary's shared cache (and one worker's memory).
    for (const key of warm) expect((await models(key.key)).status).toBe(200);

    const forged = Array.from({ length: forgedCount }, () => generateVirtualKeySecret().secret);
    expect(forged.every(isWellFormedVirtualKeySecret)).toBe(true);
    // The cold keys come early in the flood (so each worker queues them); warm keys come all through it.
    const flood: { secret: string; expected: 'forged' | 'valid' }[] = forged.map((secret) => ({
      secret,
      expected: 'forged',
    }));
    cold.forEach((key, index) => flood.splice(100 + index * 20, 0, { secret: key.key, expected: 'valid' }));
    for (let index = 1; index <= 20; index++)
      flood.splice(index * 1_000, 0, { secret: warm[index % warm.length]!.key, expected: 'valid' });

    await observer`select pg_stat_statements_reset()`;
    let releaseLock!: () => void;
    const released = new Promise<void>((resolve) => (releaseLock = resolve));
    let locked = false;
    const lockHeld = new Promise<void>((resolveHeld, rejectHeld) => {
      observer
        .begin(async (transaction) => {
          await transaction`lock table virtual_keys in access exclusive mode`;
          locked = true;
          resolveHeld();
          await released;
        })
        .catch(rejectHeld);
    });
    await lockHeld;

    let answered = 0;
    const answers = flood.map(({ secret }) =>
      models(secret).then((answer): Answer => {
        answered++;
        return { ...answer, answeredWhileLocked: locked };
      }),
    );
    let reachedTheBound = true;
    let waitingOnTheLock = -1;
    try {
      await waitFor(
        `all but the ${heldRequests} held requests to be answered`,
        async () => answered >= flood.length - heldRequests,
        60_000,
        50,
      );
      waitingOnTheLock = await keyQueriesWaitingOnTheLock();
    } catch {
      reachedTheBound = false;
    } finally {
      locked = false;
      releaseLock();
    }
    const outcomes = await Promise.all(answers);
    const refusedIndex = outcomes.findIndex((outcome) => outcome.status === 503);
    const retriedRefusal = refusedIndex === -1 ? undefined : await models(flood[refusedIndex]!.secret);
    await pool.close();
    const queries = await keyQueries();

    const bound = Math.ceil(forgedCount / 500) + maxConcurrent;
    expect(queries, `Postgres key queries for ${forgedCount} forged keys (bound ${bound})`).toBeLessThanOrEqual(bound);
    expect(reachedTheBound, `answered while locked: ${answered} of ${flood.length}`).toBe(true);
    expect(waitingOnTheLock).toBeLessThanOrEqual(maxConcurrent);
    expect(waitingOnTheLock).toBeGreaterThanOrEqual(1);

    const valid = outcomes.filter((_, index) => flood[index]!.expected === 'valid');
    expect(valid.map((outcome) => outcome.status)).toEqual(valid.map(() => 200));
    // Warm keys never waited for the database: they were answered while the table was still locked.
    const warmOutcomes = outcomes.filter((_, index) => warm.some((key) => key.key === flood[index]!.secret));
    expect(warmOutcomes.every((outcome) => outcome.answeredWhileLocked)).toBe(true);

    const forgedOutcomes = outcomes.filter((_, index) => flood[index]!.expected === 'forged');
    const unknown = forgedOutcomes.filter((outcome) => outcome.status === 401);
    const busy = forgedOutcomes.filter((outcome) => outcome.status === 503);
    expect(unknown.length + busy.length).toBe(forgedCount);
    expect(new Set(unknown.map((outcome) => outcome.code))).toEqual(new Set(['invalid_api_key']));
    expect(new Set(busy.map((outcome) => `${outcome.code} ${outcome.retryAfter}`))).toEqual(
      new Set(['key_lookup_busy 1']),
    );
    expect(busy.every((outcome) => outcome.answeredWhileLocked)).toBe(true);
    // Looked up: at most what the workers could hold (the rest was refused), cold keys aside.
    expect(unknown.length).toBeLessThanOrEqual(heldRequests - cold.length);
    expect(unknown.length).toBeGreaterThanOrEqual(maxQueued);

    // A refused key asked again is looked up like any other, and found unknown.
    expect(retriedRefusal).toEqual({ status: 401, code: 'invalid_api_key', retryAfter: undefined });
  });
});
