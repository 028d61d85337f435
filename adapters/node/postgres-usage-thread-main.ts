/**
 * The program of the Node server's usage thread (see postgres-usage-thread.ts, which starts it): one postgres-js
 * connection of its own, on which it runs the ledger's insert for each batch it is sent, in order, and answers each.
 * Built as its own entry (`dist/postgres-usage-thread-main.js`) so the thread loads only the driver, not the gateway.
 */
import { parentPort, workerData } from 'node:worker_threads';
import postgres from 'postgres';
import { redactDatabaseError } from '../shared/database-errors.ts';
import { lowerThreadPriority } from '../shared/thread-priority.ts';
import type { UsageThreadAnswer, UsageThreadRequest, UsageThreadSettings } from './postgres-usage-thread-messages.ts';

const settings = workerData as UsageThreadSettings;
const port = parentPort!;
lowerThreadPriority(settings.niceness);

const client = postgres(settings.url, {
  max: 1,
  // Like the request thread's pool (database-open.ts): an idle connection is given back, and reopened on the next batch.
  idle_timeout: 60,
  connect_timeout: 10,
  // The usage queue paces the retries of a failed batch (200 ms doubling to 5 s): the connection reconnects as soon
  // as a batch asks, rather than after postgres-js's own delay, which grows to 10-20 s over a 30 s outage and held the
  // drain back that long after the database came back.
  backoff: () => 0,
  onnotice: () => {},
  connection: { application_name: 'torii-usage' },
});
// The batch is JSON text already: sent as it is for `$1::jsonb` (json 114, jsonb 3802), as Drizzle's postgres-js
// driver sends it on the request thread, not serialised a second time into a JSON string.
client.options.serializers[114] = (value: unknown) => value;
client.options.serializers[3802] = (value: unknown) => value;

/** The inserts sent to the connection and not settled yet: `close` waits for them. */
const inFlight = new Set<Promise<void>>();

port.on('message', (request: UsageThreadRequest) => {
  if (request.kind === 'close') {
    void Promise.allSettled(inFlight)
      .then(() => client.end({ timeout: request.timeoutSeconds }))
      .finally(() => {
        port.postMessage({ id: request.id, ok: true } satisfies UsageThreadAnswer);
        port.close();
      });
    return;
  }
  const insert = client.unsafe(settings.statement, [request.batchJson]).then(
    () => port.postMessage({ id: request.id, ok: true } satisfies UsageThreadAnswer),
    (error: unknown) => {
      // Redacted here, before it leaves the thread: the SQLSTATE (or system code) and the server's reason only.
      const { message, code } = redactDatabaseError(error);
      port.postMessage({ id: request.id, ok: false, message, code } satisfies UsageThreadAnswer);
    },
  );
  inFlight.add(insert);
  void insert.finally(() => inFlight.delete(insert));
});
