/**
 * The part of workerd's built-in `cloudflare:workers` module that torii uses, declared here rather than depending on
 * @cloudflare/workers-types (whose globals would clash with the DOM and Node types the rest of the project compiles
 * with). The shapes follow workers-types; only what adapters/cloudflare calls is listed. At run time the module is
 * workerd's own: wrangler leaves `cloudflare:*` imports external when it bundles the Worker.
 */
declare module 'cloudflare:workers' {
  /** A Durable Object's SQLite database (`ctx.storage.sql`); present on classes created with `new_sqlite_classes`. */
  export interface SqlStorage {
    /** Runs one statement synchronously; bindings replace `?` in order. */
    exec<Row extends Record<string, SqlStorageValue>>(query: string, ...bindings: unknown[]): SqlStorageCursor<Row>;
  }

  /** A value SQLite hands back. */
  export type SqlStorageValue = ArrayBuffer | string | number | null;

  /** The rows of one statement. */
  export interface SqlStorageCursor<Row extends Record<string, SqlStorageValue>> extends Iterable<Row> {
    toArray(): Row[];
    /** The only row; throws unless there is exactly one. */
    one(): Row;
    readonly rowsWritten: number;
  }

  /** A Durable Object's durable storage (`ctx.storage`). */
  export interface DurableObjectStorage {
    readonly sql: SqlStorage;
    getAlarm(): Promise<number | null>;
    /** Schedules `alarm()` at `scheduledTime` (epoch ms), replacing any alarm set before. */
    setAlarm(scheduledTime: number | Date): Promise<void>;
    deleteAlarm(): Promise<void>;
  }

  /** What a Durable Object is constructed with (`ctx`). */
  export interface DurableObjectState {
    readonly storage: DurableObjectStorage;
    blockConcurrencyWhile<T>(callback: () => Promise<T>): Promise<T>;
  }

  /** How an alarm came to run. */
  export interface AlarmInvocationInfo {
    readonly isRetry: boolean;
    readonly retryCount: number;
  }

  /** The base class of Durable Objects whose public methods are callable over RPC from a stub. */
  export abstract class DurableObject<Env = unknown> {
    protected ctx: DurableObjectState;
    protected env: Env;
    constructor(ctx: DurableObjectState, env: Env);
    alarm?(alarmInfo?: AlarmInvocationInfo): void | Promise<void>;
  }
}
