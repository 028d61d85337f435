import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where one dialect's migrations sit, and the variable that overrides the search. */
interface MigrationsLayout {
  /** The folder's name in a built `dist/` copy (`migrations`), and below the package (`src/db/migrations`). */
  folder: string;
  variable: 'TORII_MIGRATIONS_DIR' | 'TORII_SQLITE_MIGRATIONS_DIR';
}

/**
 * The first folder holding `meta/_journal.json`, walking up from `from`: at each level, `<folder>` (a copy the build
 * may place in `dist/`), then `src/db/<folder>` (the package ships `src/`). The layout's variable overrides it.
 */
function findFolder(layout: MigrationsLayout, environment: NodeJS.ProcessEnv, from: string): string {
  const override = environment[layout.variable];
  if (override) {
    if (!existsSync(join(override, 'meta', '_journal.json'))) {
      throw new Error(`${layout.variable}=${override} holds no meta/_journal.json`);
    }
    return override;
  }
  const layouts = [layout.folder, join('src', 'db', layout.folder)];
  const start = from.startsWith('file:') ? dirname(fileURLToPath(from)) : from;
  const searched: string[] = [];
  for (let directory = start; ; directory = dirname(directory)) {
    for (const candidateLayout of layouts) {
      const candidate = join(directory, candidateLayout);
      if (existsSync(join(candidate, 'meta', '_journal.json'))) return candidate;
      searched.push(candidate);
    }
    if (dirname(directory) === directory) break;
  }
  throw new Error(
    `Cannot find the database migrations (meta/_journal.json) in any of: ${searched.join(', ')}. ` +
      `Set ${layout.variable} to the folder (src/db/${layout.folder} in the package).`,
  );
}

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
  return findFolder({ folder: 'migrations', variable: 'TORII_MIGRATIONS_DIR' }, environment, from);
}

/**
 * The folder of the SQLite schema's Drizzle migrations, found like {@link findMigrationsFolder}: `sqlite-migrations/`
 * (a `dist/` copy) or `src/db/sqlite-migrations/` walking up from `from`; `TORII_SQLITE_MIGRATIONS_DIR` overrides it.
 */
export function findSqliteMigrationsFolder(
  environment: NodeJS.ProcessEnv = process.env,
  from: string = import.meta.url,
): string {
  return findFolder({ folder: 'sqlite-migrations', variable: 'TORII_SQLITE_MIGRATIONS_DIR' }, environment, from);
}
