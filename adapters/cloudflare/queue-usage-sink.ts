import type { UsageEvent, UsageSink } from '../../src/usage/usage-event.ts';

/**
 * The part of a Workers Queue producer binding this sink uses (declared here rather than depending on
 * @cloudflare/workers-types; the platform's binding satisfies it).
 */
export interface WorkersQueue {
  sendBatch(messages: Iterable<{ body: unknown; contentType?: 'json' | 'text' | 'bytes' | 'v8' }>): Promise<void>;
}

/** The body of one usage message: a version, so a consumer of another torii version can recognise it, and events. */
export interface UsageQueueMessage {
  torii: 'usage';
  version: 1;
  events: UsageEvent[];
}

/**
 * Most bytes of events in one message: one 64 KB billing unit of Queues (each message is charged per 64 KB written,
 * read and deleted), well under the 128 KB a message may hold.
 */
export const usageMessageMaxBytes = 60_000;
/** Most messages and bytes in one `sendBatch` (Queues allows 100 messages and 256 KB). */
const batchMaxMessages = 100;
const batchMaxBytes = 200_000;

const encoder = new TextEncoder();

/** Packs events into message bodies of at most {@link usageMessageMaxBytes} of JSON each, in order. */
export function packUsageMessages(events: readonly UsageEvent[]): { body: UsageQueueMessage; bytes: number }[] {
  const messages: { body: UsageQueueMessage; bytes: number }[] = [];
  let current: { body: UsageQueueMessage; bytes: number } | undefined;
  for (const event of events) {
    const bytes = encoder.encode(JSON.stringify(event)).byteLength + 1;
    if (current === undefined || current.bytes + bytes > usageMessageMaxBytes) {
      current = { body: { torii: 'usage', version: 1, events: [] }, bytes: 64 };
      messages.push(current);
    }
    current.body.events.push(event);
    current.bytes += bytes;
  }
  return messages;
}

/** Reads a message body written by {@link packUsageMessages}; undefined when it is not one. */
export function readUsageMessage(body: unknown): UsageEvent[] | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const message = body as Partial<UsageQueueMessage>;
  if (message.torii !== 'usage' || message.version !== 1 || !Array.isArray(message.events)) return undefined;
  const wellFormed = message.events.every(
    (event: unknown) =>
      typeof event === 'object' &&
      event !== null &&
      typeof (event as UsageEvent).requestId === 'string' &&
      typeof (event as UsageEvent).operation === 'string' &&
      typeof (event as UsageEvent).startedAt === 'number',
  );
  return wellFormed ? message.events : undefined;
}

/**
 * A {@link UsageSink} that sends usage events to a Cloudflare Queue (the Worker's `queue()` handler writes them to
 * Postgres). Events are packed into JSON messages of up to 60 KB each (one billing unit, about 100 events), sent with
 * as few `sendBatch` calls as the platform's limits allow. A write resolves once the Queue has durably accepted every
 * message (Queues is at-least-once from there) and throws if any `sendBatch` failed; writing the same events again
 * is harmless, since the ledger is idempotent on `requestId`.
 *
 * @example
 * ```ts
 * const sink = createQueueUsageSink(env.TORII_USAGE_QUEUE);
 * await sink.write(events);
 * ```
 */
export function createQueueUsageSink(queue: WorkersQueue): UsageSink {
  return {
    async write(events) {
      const messages = packUsageMessages(events);
      let batch: { body: UsageQueueMessage; contentType: 'json' }[] = [];
      let batchBytes = 0;
      const sends: Promise<void>[] = [];
      for (const message of messages) {
        if (batch.length === batchMaxMessages || (batch.length > 0 && batchBytes + message.bytes > batchMaxBytes)) {
          sends.push(queue.sendBatch(batch));
          batch = [];
          batchBytes = 0;
        }
        batch.push({ body: message.body, contentType: 'json' });
        batchBytes += message.bytes;
      }
      if (batch.length > 0) sends.push(queue.sendBatch(batch));
      await Promise.all(sends);
    },
  };
}
