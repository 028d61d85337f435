import { StartupError } from './startup-error.ts';

/**
 * Which database a server process opens, from `DATABASE_URL` and `TORII_DATABASE`:
 *
 * - `postgres`: `DATABASE_URL` is set (Postgres through postgres-js).
 * - `sqlite` (the default without `DATABASE_URL`): the embedded SQLite database `TORII_DATA_DIR/torii.sqlite`,
 *   through the runtime's built-in `node:sqlite`, its statements run on a thread of their own.
 * - `pglite` (`TORII_DATABASE=pglite`): the embedded PGlite (Postgres compiled to WebAssembly) in
 *   `TORII_DATA_DIR/pglite`, in the process itself; the choice before SQLite, kept for existing data directories.
 * - `off` (`TORII_DATABASE=off`): no database and no ledger at all. The gateway is a pure proxy that accepts the
 *   master key only: no virtual keys, no admin key or usage API, no usage rows, no stored Responses. Nothing is
 *   written to disk.
 */
export type DatabaseSetting = 'postgres' | 'sqlite' | 'pglite' | 'off';

/** The values `TORII_DATABASE` takes. */
const databaseValues = ['sqlite', 'pglite', 'off'] as const;

/**
 * Reads {@link DatabaseSetting} from the environment; a value it does not know, or any value next to a `DATABASE_URL`
 * (which of the two was meant?), is a {@link StartupError} naming `TORII_DATABASE`.
 *
 * @example
 * ```ts
 * if (readDatabaseSetting(process.env) === 'off') startWithoutLedger();
 * ```
 */
export function readDatabaseSetting(environment: Record<string, string | undefined>): DatabaseSetting {
  const value = environment.TORII_DATABASE?.trim().toLowerCase() || undefined;
  if (value !== undefined && !(databaseValues as readonly string[]).includes(value))
    throw new StartupError('TORII_DATABASE', `must be one of ${databaseValues.join(', ')}, got "${value}"`);
  if (environment.DATABASE_URL) {
    if (value !== undefined)
      throw new StartupError(
        'TORII_DATABASE',
        `is "${value}" but DATABASE_URL is set: unset one of them (DATABASE_URL is Postgres; TORII_DATABASE chooses ` +
          'an embedded database, or off)',
      );
    return 'postgres';
  }
  return (value ?? 'sqlite') as DatabaseSetting;
}
