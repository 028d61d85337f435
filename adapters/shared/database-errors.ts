import { isGatewayError } from '../../src/errors.ts';

/**
 * Database errors as they may be logged. Drivers put the statement's parameters into their errors: Drizzle's
 * `DrizzleQueryError` message ends with `params: <every parameter>`, postgres-js and PGlite attach `parameters` /
 * `params` and `query` to the error object, and Postgres's own messages quote the offending value for data errors
 * (`invalid input syntax for type uuid: "..."`). Parameters are key hashes, key metadata and usage rows, none of which
 * may reach a log line, so everything the database layer throws goes through {@link redactDatabaseError} first.
 */

/** A database failure whose message is safe to log: the SQLSTATE and the server's reason, never parameter values. */
export class DatabaseOperationError extends Error {
  /** The SQLSTATE (`53100` disk full, `42P01` undefined table ...) or the system error code (`ECONNREFUSED`). */
  readonly code: string | undefined;
  /** Marker, recognised without `instanceof`. */
  readonly isDatabaseOperationError = true;

  constructor(message: string, code: string | undefined) {
    super(message);
    this.name = 'DatabaseOperationError';
    this.code = code;
  }
}

interface ErrorLike {
  message?: unknown;
  code?: unknown;
  cause?: unknown;
}

const sqlState = /^[0-9A-Z]{5}$/;

/** The innermost error of a cause chain that carries a SQLSTATE or a system error code, else the innermost one. */
function rootCause(error: unknown): ErrorLike | undefined {
  let current: unknown = error;
  let innermost: ErrorLike | undefined;
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
    const candidate = current as ErrorLike;
    innermost = candidate;
    if (typeof candidate.code === 'string' && candidate.code.length > 0) return candidate;
    current = candidate.cause;
  }
  return innermost;
}

/**
 * The message of a Postgres error with quoted values removed when it is a data exception (SQLSTATE class 22), the
 * class whose messages quote the value sent (`invalid input syntax for type json`, `value too long`). Other classes
 * quote only identifiers (relations, constraints) and stay as they are.
 */
function safeServerMessage(code: string, message: string): string {
  if (!code.startsWith('22')) return message;
  return message.replace(/"(?:[^"\\]|\\.)*"/g, '"…"');
}

/**
 * Turns anything a database call threw into a {@link DatabaseOperationError} that keeps the SQLSTATE (or SQLite's
 * `SQLITE_*` code, or the system error code) and the server's reason, and drops the statement's parameters, the statement and the original error
 * object (whose properties would be serialised by a logger).
 *
 * @example
 * try { await sink.write(events); } catch (error) { throw redactDatabaseError(error); }
 */
export function redactDatabaseError(error: unknown): DatabaseOperationError {
  if ((error as { isDatabaseOperationError?: unknown } | null)?.isDatabaseOperationError === true)
    return error as DatabaseOperationError;
  const root = rootCause(error);
  const code = typeof root?.code === 'string' ? root.code : undefined;
  const rawMessage = typeof root?.message === 'string' ? root.message : '';
  if (code !== undefined && sqlState.test(code)) {
    return new DatabaseOperationError(`database error ${code}: ${safeServerMessage(code, rawMessage)}`, code);
  }
  if (code !== undefined && code.startsWith('SQLITE_')) {
    // SQLite's messages name tables, columns and constraints, never a bound value (sqlite-executor.ts).
    return new DatabaseOperationError(`database error ${code}: ${rawMessage}`, code);
  }
  if (code !== undefined) {
    // A system error (ECONNREFUSED, ENOSPC ...): its message names an address or a path, never a parameter.
    return new DatabaseOperationError(`database unavailable: ${rawMessage || code}`, code);
  }
  // Drizzle's own wrapper without a driver cause: its message is "Failed query: <sql> params: <values>".
  if (rawMessage.startsWith('Failed query:') || rawMessage.includes('\nparams:'))
    return new DatabaseOperationError('database query failed', undefined);
  return new DatabaseOperationError(`database error: ${rawMessage || String(error)}`, undefined);
}

/**
 * Wraps every method of a store so what it throws (a GatewayError excepted) is redacted ({@link redactDatabaseError}) and, for the methods
 * listed in `writes`, runs `beforeWrite` first (the PGlite disk reserve check).
 *
 * @example
 * const keyStore = guardDatabaseMethods(createDrizzleKeyStore(db), { writes: ['create', 'update'] });
 */
export function guardDatabaseMethods<Store extends object>(
  store: Store,
  options: { writes?: readonly (keyof Store)[]; beforeWrite?: () => Promise<void> } = {},
): Store {
  const guarded = {} as Record<string, unknown>;
  const writes = new Set<PropertyKey>(options.writes ?? []);
  for (const name of Object.keys(store) as (keyof Store & string)[]) {
    const method = store[name];
    if (typeof method !== 'function') {
      guarded[name] = method;
      continue;
    }
    const call = (method as (...parameters: unknown[]) => Promise<unknown>).bind(store);
    const check = writes.has(name) ? options.beforeWrite : undefined;
    guarded[name] = async (...parameters: unknown[]) => {
      try {
        if (check !== undefined) await check();
        return await call(...parameters);
      } catch (error) {
        // A store's own refusal of its input (an invalid cursor: a 400) is the client's answer, not a database failure.
        if (isGatewayError(error)) throw error;
        throw redactDatabaseError(error);
      }
    };
  }
  return guarded as Store;
}
