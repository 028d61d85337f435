import { describeResponseStoreConformance } from '../../tests/conformance/response-store-suite.ts';
import { createEmptyTestDatabase } from '../../tests/services/test-database.ts';
import { createWorkerDatabase } from './worker-database.ts';
import { createWorkerResponseStore } from './worker-database-stores.ts';
import { bundledMigrations } from './worker-migrations-bundled.ts';

// The Worker's way to Postgres run in Node: a connection per call, the bundled migrations applied by the first one.
describeResponseStoreConformance('worker (drizzle on postgres-js, a connection per call)', async () => {
  const empty = await createEmptyTestDatabase();
  const closing: Promise<unknown>[] = [];
  const database = createWorkerDatabase(empty.url, {
    migrations: bundledMigrations,
    keepAlive: (work) => void closing.push(work.catch(() => {})),
    logger: { info: () => {}, warn: () => {}, error: () => {} },
  });
  return {
    createStore: (now) => createWorkerResponseStore(database, { now }),
    async close() {
      await Promise.all(closing);
      await empty.drop();
    },
  };
});
