/**
 * A child process for tests/limits/two-process-limit.test.ts: one gateway-like process that hammers rate-limited
 * keys through real limiters over a real Redis, and reports how many requests each limiter let through.
 *
 * It receives a {@link HammerPlan} by IPC, runs every mode's limiter at once (each on its own key), with `clients`
 * concurrent loops per limiter that reserve, "call the upstream" (a macrotask), settle, and on a refusal wait 1 ms
 * and try again, from `startAt` to `stopAt` (both inside one window), then answers a {@link HammerReport}.
 */
import { Redis } from 'ioredis';
import { createRedisLimitStore } from '../../adapters/node/redis-limit-store.ts';
import { createRateLimiter, type RateLimitMode } from '../../src/limits/rate-limiter.ts';

/** One limiter to hammer. */
export interface HammerTarget {
  name: string;
  mode: RateLimitMode;
  keyId: string;
  rpmLimit: number | null;
  tpmLimit: number | null;
  estimatedTokens: number;
}

/** What the parent sends. */
export interface HammerPlan {
  redisUrl: string;
  keyPrefix: string;
  windowMs: number;
  startAt: number;
  stopAt: number;
  clients: number;
  targets: HammerTarget[];
}

/** What the child answers: admitted and refused requests per target name, and store calls seen. */
export interface HammerReport {
  admitted: Record<string, number>;
  refused: Record<string, number>;
  /** Reservations answered synchronously (no Promise), per target. */
  synchronous: Record<string, number>;
  storeErrors: number;
}

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

async function run(plan: HammerPlan): Promise<HammerReport> {
  const redis = new Redis(plan.redisUrl, { maxRetriesPerRequest: 1 });
  const store = createRedisLimitStore({ redis, keyPrefix: plan.keyPrefix });
  const report: HammerReport = { admitted: {}, refused: {}, synchronous: {}, storeErrors: 0 };
  const limiters = plan.targets.map((target) => ({
    target,
    limiter: createRateLimiter({
      mode: target.mode,
      store,
      windowMs: plan.windowMs,
      onStoreError: () => {
        report.storeErrors += 1;
      },
    }),
  }));
  for (const { target } of limiters) {
    report.admitted[target.name] = 0;
    report.refused[target.name] = 0;
    report.synchronous[target.name] = 0;
  }
  await redis.ping();
  await sleep(Math.max(0, plan.startAt - Date.now()));
  const loops = limiters.flatMap(({ target, limiter }) =>
    Array.from({ length: plan.clients }, async () => {
      while (Date.now() < plan.stopAt) {
        const pending = limiter.reserve(target);
        if (!(pending instanceof Promise)) report.synchronous[target.name]! += 1;
        const outcome = await pending;
        if (outcome.allowed) {
          report.admitted[target.name]! += 1;
          await new Promise((resolve) => setImmediate(resolve));
          limiter.settle(outcome, target.estimatedTokens);
        } else {
          report.refused[target.name]! += 1;
          await sleep(1);
        }
      }
    }),
  );
  await Promise.all(loops);
  await Promise.all(limiters.map(({ limiter }) => limiter.drain()));
  await redis.quit();
  return report;
}

process.once('message', (plan: HammerPlan) => {
  run(plan).then(
    (report) => process.send?.({ report }, () => process.exit(0)),
    (error: unknown) =>
      process.send?.({ error: String(error instanceof Error ? error.stack : error) }, () => process.exit(1)),
  );
});
process.send?.({ ready: true });
