import type { GatewayLogger } from '../../src/services.ts';
import type { UsageEvent, UsageSink } from '../../src/usage/usage-event.ts';
import { readUsageMessage } from './queue-usage-sink.ts';

/** One message of a Queue batch, as the `queue()` handler receives it (the platform's `Message` satisfies it). */
export interface WorkersQueueMessage {
  readonly id: string;
  readonly body: unknown;
  /** How many times it has been delivered, this time included (1 on the first delivery). */
  readonly attempts: number;
  ack(): void;
  retry(options?: { delaySeconds?: number }): void;
}

/** A batch of Queue messages (the platform's `MessageBatch` satisfies it). */
export interface WorkersQueueBatch {
  readonly queue: string;
  readonly messages: readonly WorkersQueueMessage[];
}

/** Seconds before a failed batch is delivered again: 5 s doubling with each attempt, at most 5 minutes. */
export function usageRetryDelaySeconds(attempts: number): number {
  return Math.min(300, 5 * 2 ** Math.max(0, attempts - 1));
}

/**
 * The Queue consumer of the usage ledger: writes every event of the batch's messages with ONE call to `sink` (the
 * Drizzle sink: one multi-row insert, `ON CONFLICT (request_id) DO NOTHING`, so a batch delivered twice never counts
 * twice), then acknowledges each message. When the write fails, every message is retried with a delay that grows with
 * its attempts ({@link usageRetryDelaySeconds}); after the consumer's `max_retries` the Queue moves them to the
 * dead-letter queue, where they wait (consume it with this Worker to replay them). A message that is not a usage
 * message of this version is never acknowledged either: it is retried without delay and so lands in the dead-letter
 * queue, logged, for a person to look at.
 *
 * @example
 * ```ts
 * export default {
 *   queue: (batch, env) => consumeUsageBatch(batch, createWorkerUsageSink(database), consoleLogger),
 * };
 * ```
 */
export async function consumeUsageBatch(
  batch: WorkersQueueBatch,
  sink: UsageSink,
  logger: GatewayLogger,
): Promise<{ written: number; retried: number; malformed: number }> {
  const readable: WorkersQueueMessage[] = [];
  const events: UsageEvent[] = [];
  let malformed = 0;
  for (const message of batch.messages) {
    const messageEvents = readUsageMessage(message.body);
    if (messageEvents === undefined) {
      malformed++;
      logger.error('usage message not understood; it goes to the dead-letter queue', {
        queue: batch.queue,
        messageId: message.id,
        attempts: message.attempts,
      });
      message.retry();
      continue;
    }
    readable.push(message);
    events.push(...messageEvents);
  }
  if (readable.length === 0) return { written: 0, retried: 0, malformed };
  try {
    await sink.write(events);
  } catch (error) {
    const attempts = Math.max(...readable.map((message) => message.attempts));
    const delaySeconds = usageRetryDelaySeconds(attempts);
    logger.warn('ledger write failed; the usage messages will be delivered again', {
      queue: batch.queue,
      messages: readable.length,
      events: events.length,
      attempts,
      delaySeconds,
      error: error instanceof Error ? error.message : String(error),
    });
    for (const message of readable) message.retry({ delaySeconds: usageRetryDelaySeconds(message.attempts) });
    return { written: 0, retried: readable.length, malformed };
  }
  for (const message of readable) message.ack();
  return { written: events.length, retried: 0, malformed };
}
