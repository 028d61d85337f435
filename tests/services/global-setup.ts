/**
 * Vitest globalSetup: real services for the whole test run (both projects).
 *
 * - `TORII_TEST_DATABASE_URL` unset: starts a throwaway PostgreSQL (initdb in a temp dir, trust auth on 127.0.0.1, a
 *   free port; as the `postgres` user when running as root) and sets the variable.
 * - `TORII_TEST_REDIS_URL` unset: starts `redis-server` on a free port with no persistence and sets the variable.
 *
 * Variables already set (CI pointing at its own servers, a developer's local ones) are used as they are. The
 * variables are set on `process.env` of the vitest main process before any worker starts, so every test worker and
 * every child process a test spawns inherits them; they are also `provide`d as `torii-test-services` for tests that
 * prefer `inject`. Both servers are stopped and their directories removed at teardown.
 *
 * Both projects list this file; the second call finds the variables set and starts nothing, and only the call that
 * started a server stops it.
 */
import type { TestProject } from 'vitest/node';
import { startTestPostgres } from './postgres-server.ts';
import { startTestRedis } from './redis-server.ts';

/** What the global setup hands to tests through `inject('torii-test-services')`. */
export interface TestServices {
  databaseUrl: string;
  redisUrl: string;
}

declare module 'vitest' {
  interface ProvidedContext {
    'torii-test-services': TestServices;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const stops: Array<() => Promise<void>> = [];
  const started = Date.now();
  const [database, redis] = await Promise.allSettled([
    process.env.TORII_TEST_DATABASE_URL ? undefined : startTestPostgres(),
    process.env.TORII_TEST_REDIS_URL ? undefined : startTestRedis(),
  ]);
  for (const result of [database, redis]) {
    if (result.status === 'fulfilled' && result.value) stops.push(result.value.stop);
  }
  const failures = [database, redis].filter((result) => result.status === 'rejected');
  if (failures.length > 0) {
    await Promise.all(stops.map((stop) => stop()));
    throw new Error(failures.map((failure) => String(failure.reason?.message ?? failure.reason)).join('\n\n'));
  }
  if (database.status === 'fulfilled' && database.value) process.env.TORII_TEST_DATABASE_URL = database.value.url;
  if (redis.status === 'fulfilled' && redis.value) process.env.TORII_TEST_REDIS_URL = redis.value.url;
  if (stops.length > 0 && process.env.TORII_TEST_SERVICES_QUIET !== '1') {
    console.log(
      `test services ready in ${Date.now() - started} ms: ${process.env.TORII_TEST_DATABASE_URL} ${process.env.TORII_TEST_REDIS_URL}`,
    );
  }
  project.provide('torii-test-services', {
    databaseUrl: process.env.TORII_TEST_DATABASE_URL ?? '',
    redisUrl: process.env.TORII_TEST_REDIS_URL ?? '',
  });
  return async () => {
    await Promise.all(stops.map((stop) => stop()));
  };
}
