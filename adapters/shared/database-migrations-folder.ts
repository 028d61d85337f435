import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the migrations may sit below a directory: a built `dist/` copy, or the source folder of the package. */
const layouts = ['migrations', join('src', 'db', 'migrations')];

/**
 * The folder of Drizzle migrations (`meta/_journal.json` + SQL), found from this module's own location so it works
 * from the sources (`adapters/node/*.ts`), the server bundle (`dist/server.js`) and the library build
 * (`dist/lib/node.js`), wherever the package is installed: walks up from `from` and takes the first directory that
 * holds `migrations/` (a copy the build may place in `dist/`) or `src/db/migrations/` (the package ships `src/`).
 * `TORII_MIGRATIONS_DIR` overrides the search.
 */
export function findMigrationsFolder(
  environment: NodeJS.ProcessEnv = process.env,
  from: string = import.meta.url,
): string {
  const override = environment.TORII_MIGRATIONS_DIR;
  if (override) {
    if (!existsSync(join(override, 'meta', '_journal.json'))) {
      throw new Error(`TORII_MIGRATIONS_DIR=${override} holds no meta/_journal.json`);
    }
    return override;
  }
  const start = from.startsWith('file:') ? dirname(fileURLToPath(from)) : from;
  const searched: string[] = [];
  for (let directory = start; ; directory = dirname(directory)) {
    for (const layout of layouts) {
      const candidate = join(directory, layout);
      if (existsSync(join(candidate, 'meta', '_journal.json'))) return candidate;
      searched.push(candidate);
    }
    if (dirname(directory) === directory) break;
  }
  throw new Error(
    `Cannot find the database migrations (meta/_journal.json) in any of: ${searched.join(', ')}. ` +
      'Set TORII_MIGRATIONS_DIR to the folder (src/db/migrations in the package).',
  );
}
