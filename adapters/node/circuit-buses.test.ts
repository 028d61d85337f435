import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { SharedCircuitChange } from '../../src/routing/circuit-bus.ts';
import { recordingLogger } from '../../tests/support/recording-logger.ts';
import { createRedisCircuitBus, type RedisCircuitBus } from './circuit-buses.ts';
import { openRedisConnection, openRedisSubscriberConnection, whenRedisReady } from './redis-connection.ts';
import { createRedisKeyInvalidationBus } from './redis-key-invalidation-bus.ts';

function testRedisUrl(): string {
  const url = process.env.TORII_TEST_REDIS_URL;
  if (!url) throw new Error('TORII_TEST_REDIS_URL is not set: these tests need a real Redis (see tests/services/).');
  return url;
}

describe('createRedisCircuitBus (real Redis)', () => {
  const connections: Redis[] = [];
  const closers: (() => Promise<void>)[] = [];

  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
    await Promise.all(
      connections.splice(0).map((connection) => connection.quit().catch(() => connection.disconnect())),
    );
  });

  function open(channel: string) {
    const { logger, lines } = recordingLogger();
    const publisher = openRedisConnection(testRedisUrl(), { logger });
    const subscriber = openRedisSubscriberConnection(testRedisUrl(), { logger });
    connections.push(publisher, subscriber);
    const bus: RedisCircuitBus = createRedisCircuitBus({ publisher, subscriber, logger, channel });
    closers.push(() => bus.close());
    return { bus, publisher, subscriber, logger, lines };
  }

  it('carries openings and closings to every bus, on a subscriber connection it shares with key invalidations', async () => {
    const channel = `test:circuits:${randomUUID()}`;
    const first = open(channel);
    const second = open(channel);
    // The key invalidation bus subscribes on the same connection: each sees only its own channel.
    const invalidations = createRedisKeyInvalidationBus({
      publisher: second.publisher,
      subscriber: second.subscriber,
      logger: second.logger,
      channel: `${channel}:keys`,
    });
    closers.push(() => invalidations.close());
    const seenInvalidations: unknown[] = [];
    invalidations.subscribe((invalidation) => seenInvalidations.push(invalidation));
    const received: SharedCircuitChange[] = [];
    const all = new Promise<void>((resolve) => {
      second.bus.subscribe((change) => {
        received.push(change);
        if (received.length === 2) resolve();
      });
    });
    await Promise.all([
      second.bus.whenSubscribed(),
      invalidations.whenSubscribed(),
      whenRedisReady(first.publisher, 5_000),
    ]);
    const opening: SharedCircuitChange = { origin: 'one', deploymentId: 'gpt/0', state: 'open', openUntil: 1_000_000 };
    first.bus.publish(opening);
    first.bus.publish({ origin: 'one', deploymentId: 'gpt/0', state: 'closed' });
    await all;
    expect(received).toEqual([opening, { origin: 'one', deploymentId: 'gpt/0', state: 'closed' }]);
    expect(seenInvalidations).toEqual([]);
  });

  it('drops a malformed message with a log line, and carries on', async () => {
    const channel = `test:circuits:${randomUUID()}`;
    const listener = open(channel);
    const received: SharedCircuitChange[] = [];
    const next = new Promise<void>((resolve) =>
      listener.bus.subscribe((change) => {
        received.push(change);
        resolve();
      }),
    );
    await Promise.all([listener.bus.whenSubscribed(), whenRedisReady(listener.publisher, 5_000)]);
    await listener.publisher.publish(channel, 'not json');
    await listener.publisher.publish(channel, JSON.stringify({ origin: 'x', deploymentId: 'a/0', state: 'open' }));
    await listener.publisher.publish(channel, JSON.stringify({ origin: 'x', deploymentId: 'a/0', state: 'closed' }));
    await next;
    expect(received).toEqual([{ origin: 'x', deploymentId: 'a/0', state: 'closed' }]);
    expect(listener.lines.filter((line) => line.message === 'ignored a malformed circuit change message')).toHaveLength(
      2,
    );
  });
});
