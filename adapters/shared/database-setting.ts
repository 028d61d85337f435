import { StartupError } from './startup-error.ts';

/**
 * Which database a server process opens, from `DATABASE_URL` and `TORII_DATABASE`:
 *
 * - `postgres`: `DATABASE_URL` is set (Postgres through postgres-js).
 * - `embedded`: no `DATABASE_URL` and `TORII_DATABASE` unset or naming an embedded engine: the database on local disk
 *   in `TORII_DATA_DIR`.
 * - `off`: `TORII_DATABASE=off`: no database and no ledger at all. The gateway is a pure proxy that accepts the
 *   master key only: no virtual keys, no admin key or usage API, no usage rows, no stored Responses (requests with
 *   `store: true` are served without keeping the response). Nothing is written to disk.
 */
export type DatabaseSetting = 'postgres' | 'embedded' | 'off';

/** The values `TORII_DATABASE` takes. */
const databaseValues = ['off', 'embedded'] as const;

/**
 * Reads {@link DatabaseSetting} from the environment; a value it does not know, or `off` next to a `DATABASE_URL`
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
  const hasUrl = Boolean(environment.DATABASE_URL);
  if (value === 'off') {
    if (hasUrl)
      throw new StartupError(
        'TORII_DATABASE',
        'is "off" but DATABASE_URL is set: unset one of them (off runs with no database at all)',
      );
    return 'off';
  }
  return hasUrl ? 'postgres' : 'embedded';
}
