import { describe, expect, it } from 'vitest';
import { testUsageEvent } from '../../src/usage/usage-queue-test-events.ts';
import {
  createQueueUsageSink,
  packUsageMessages,
  readUsageMessage,
  usageMessageMaxBytes,
  type WorkersQueue,
} from './queue-usage-sink.ts';

/** A producer binding that keeps what it was sent (the platform's limits are checked by the test). */
function recordingQueue(failing = false) {
  const batches: { body: unknown; contentType?: string }[][] = [];
  const queue: WorkersQueue = {
    async sendBatch(messages) {
      if (failing) throw new Error('Queue send failed: 503');
      batches.push([...messages]);
    },
  };
  return { queue, batches };
}

const bytesOf = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;

describe('the usage messages of the Queue', () => {
  it('packs events in order into messages of at most 60 KB that read back as the same events', () => {
    const events = Array.from({ length: 1_000 }, (_, index) => testUsageEvent(index));
    const messages = packUsageMessages(events);
    expect(messages.length).toBeGreaterThan(5);
    for (const message of messages) expect(bytesOf(message.body)).toBeLessThanOrEqual(usageMessageMaxBytes);
    const read = messages.flatMap((message) => readUsageMessage(JSON.parse(JSON.stringify(message.body))) ?? []);
    expect(read).toEqual(events);
  });

  it('puts an event too large to share a message in a message of its own', () => {
    const large = { ...testUsageEvent(1), modelGroup: 'g'.repeat(usageMessageMaxBytes) };
    const messages = packUsageMessages([testUsageEvent(0), large, testUsageEvent(2)]);
    expect(messages.map((message) => message.body.events.map((event) => event.requestId))).toEqual([
      ['request-0'],
      ['request-1'],
      ['request-2'],
    ]);
  });

  it('reads nothing from a body that is not a usage message of this version', () => {
    for (const body of [
      null,
      'text',
      { events: [testUsageEvent(1)] },
      { torii: 'usage', version: 2, events: [testUsageEvent(1)] },
      { torii: 'usage', version: 1, events: [{ requestId: 7 }] },
    ])
      expect(readUsageMessage(body)).toBeUndefined();
  });
});

describe('createQueueUsageSink', () => {
  it('sends JSON messages in batches within the Queue limits (100 messages, 256 KB)', async () => {
    const { queue, batches } = recordingQueue();
    const events = Array.from({ length: 2_500 }, (_, index) => testUsageEvent(index));
    await createQueueUsageSink(queue).write(events);
    expect(batches.length).toBeGreaterThan(1);
    for (const batch of batches) {
      expect(batch.length).toBeLessThanOrEqual(100);
      expect(batch.reduce((sum, message) => sum + bytesOf(message.body), 0)).toBeLessThanOrEqual(256 * 1024);
      for (const message of batch) expect(message.contentType).toBe('json');
    }
    const sent = batches.flat().flatMap((message) => readUsageMessage(message.body) ?? []);
    expect(sent).toEqual(events);
  });

  it('fails the write when the Queue refuses a batch', async () => {
    const { queue } = recordingQueue(true);
    await expect(createQueueUsageSink(queue).write([testUsageEvent(1)])).rejects.toThrow(/503/);
  });
});
