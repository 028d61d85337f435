/**
 * drizzle-kit configuration of the SQLite schema (the embedded default database): `npx drizzle-kit generate --config
 * drizzle-sqlite.config.ts` writes a new migration into src/db/sqlite-migrations/ from src/db/sqlite-schema.ts. Keep
 * it in step with the Postgres schema (drizzle.config.ts): a change to one is a change to both. The Node and Deno
 * adapters apply it at start (adapters/shared/sqlite-database-open.ts).
 */
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/sqlite-schema.ts',
  out: './src/db/sqlite-migrations',
});
