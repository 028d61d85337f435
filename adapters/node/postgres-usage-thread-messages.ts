/** What the usage thread is started with (its `workerData`). */
export interface UsageThreadSettings {
  /** The `DATABASE_URL`. */
  url: string;
  /** The ledger's insert, `$1` the batch's JSON (`usageInsertStatement`). */
  statement: string;
  /** How much lower than the process the thread runs, in nice steps (see thread-priority.ts). */
  niceness: number;
}

/** A message to the usage thread: a batch to insert, or the last one, closing its connection. */
export type UsageThreadRequest =
  { id: number; kind: 'insert'; batchJson: string } | { id: number; kind: 'close'; timeoutSeconds: number };

/** The usage thread's answer to a request: done, or why not (message and code, redacted in the thread). */
export type UsageThreadAnswer =
  { id: number; ok: true } | { id: number; ok: false; message: string; code: string | undefined };
