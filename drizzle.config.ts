/**
 * drizzle-kit configuration: `npx drizzle-kit generate` writes a new migration into src/db/migrations/ from
 * src/db/schema.ts. The one folder serves every driver (postgres-js, PGlite, Hyperdrive); the Node adapter applies it
 * at start (adapters/shared/database-migrate.ts). A Worker has no file system, so it applies a bundled copy: after
 * generating, run `node adapters/cloudflare/worker-migrations-generate.ts` (a test fails while the copy is stale).
 * Commit the generated SQL, meta/ and the bundled copy together.
 */
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema.ts',
  out: './src/db/migrations',
});
