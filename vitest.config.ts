import { defineConfig } from 'vitest/config';

/**
 * Test projects: `unit` runs the tests that sit beside the code (plain Node, no servers); `e2e` starts the real
 * gateway on each runtime (Node cluster, workerd via wrangler, Deno) against a local mock upstream and drives it
 * with the real openai SDK; `chaos` drives the built gateway on each runtime with hostile upstreams and clients
 * (tests/chaos). `pnpm test` builds first, because the Node e2e runs dist/server.js.
 * Both start real PostgreSQL and Redis servers for the run (tests/services/global-setup.ts) unless
 * TORII_TEST_DATABASE_URL / TORII_TEST_REDIS_URL point at running ones.
 */
export default defineConfig({
  test: {
    // Most files wait on child processes and servers (gateways, Postgres, workerd, Deno), not on this process's CPU:
    // three at once keep a 2-core machine busy. (Vitest's default is one file at a time below 3 cores.)
    maxWorkers: 3,
    projects: [
      {
        test: {
          name: 'unit',
          // Many unit files still start a real service (PGlite, SQLite's thread, Redis, workerd for the conformance
          // suites): under CI on a busy 2-core host, loops over them took 5-6 s, past Vitest's 5 s default. A hang
          // still fails, at 30 s.
          testTimeout: 30_000,
          globalSetup: ['tests/services/global-setup.ts'],
          include: [
            'src/**/*.test.ts',
            'providers/**/*.test.ts',
            'adapters/**/*.test.ts',
            'tests/**/*.test.ts',
            'bench/**/*.test.ts',
          ],
          exclude: ['tests/e2e/**', 'tests/chaos/**', '**/node_modules/**'],
        },
      },
      {
        test: {
          name: 'e2e',
          globalSetup: ['tests/services/global-setup.ts'],
          include: ['tests/e2e/**/*.test.ts'],
          testTimeout: 30_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'chaos',
          globalSetup: ['tests/services/global-setup.ts'],
          include: ['tests/chaos/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
