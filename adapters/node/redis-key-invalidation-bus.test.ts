import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { KeyInvalidation } from '../../src/auth/key-invalidation.ts';
import { recordingLogger } from '../../tests/support/recording-logger.ts';
import { openRedisConnection, openRedisSubscriberConnection, whenRedisReady } from './redis-connection.ts';
import { startFreezableProxy } from './redis-freezable-proxy.test-helper.ts';
import {
  createRedisKeyInvalidationBus,
  parseKeyInvalidationMessage,
  type RedisKeyInvalidationBus,
} from './redis-key-invalidation-bus.ts';

function testRedisUrl(): string {
  const url = process.env.TORII_TEST_REDIS_URL;
  if (!url) throw new Error('TORII_TEST_REDIS_URL is not set: these tests need a real Redis (see tests/services/).');
  return url;
}

const hashA = 'a'.repeat(64);
const hashB = 'b'.repeat(64);

/** Resolves with the next `count` invalidations a bus delivers to a listener, or rejects after `timeoutMs`. */
function nextInvalidations(bus: RedisKeyInvalidationBus, count: number, timeoutMs = 5_000) {
  return new Promise<KeyInvalidation[]>((resolve, reject) => {
    const received: KeyInvalidation[] = [];
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`received ${received.length} of ${count} invalidations in ${timeoutMs} ms`));
    }, timeoutMs);
    const unsubscribe = bus.subscribe((invalidation) => {
      received.push(invalidation);
      if (received.length < count) return;
      clearTimeout(timer);
      unsubscribe();
      resolve(received);
    });
  });
}

async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('parseKeyInvalidationMessage', () => {
  it('reads a well-formed message and tolerates fields it does not know', () => {
    expect(parseKeyInvalidationMessage(JSON.stringify({ hashes: [hashA, hashB], version: 7 }))).toEqual({
      hashes: [hashA, hashB],
      version: 7,
    });
    expect(parseKeyInvalidationMessage(JSON.stringify({ hashes: [], version: 0, reason: 'rotate' }))).toEqual({
      hashes: [],
      version: 0,
    });
  });

  it('rejects what is not JSON or not of the shape', () => {
    for (const message of [
      '',
      'not json',
      'null',
      '[]',
      '{}',
      JSON.stringify({ hashes: hashA, version: 1 }),
      JSON.stringify({ hashes: [1], version: 1 }),
      JSON.stringify({ hashes: [''], version: 1 }),
      JSON.stringify({ hashes: [hashA], version: -1 }),
      JSON.stringify({ hashes: [hashA], version: 1.5 }),
      JSON.stringify({ hashes: [hashA], version: '2' }),
      JSON.stringify({ hashes: [hashA] }),
    ])
      expect(parseKeyInvalidationMessage(message), message).toBeUndefined();
  });
});

describe('createRedisKeyInvalidationBus (real Redis)', () => {
  const connections: Redis[] = [];
  const buses: RedisKeyInvalidationBus[] = [];
  let channel: string;

  function openBus(overrides: Partial<Parameters<typeof createRedisKeyInvalidationBus>[0]> = {}) {
    const { logger } = recordingLogger();
    const publisher = openRedisConnection(testRedisUrl(), { logger });
    const subscriber = openRedisSubscriberConnection(testRedisUrl(), { logger });
    connections.push(publisher, subscriber);
    const bus = createRedisKeyInvalidationBus({ publisher, subscriber, logger, channel, ...overrides });
    buses.push(bus);
    return { bus, publisher, subscriber };
  }

  beforeAll(() => {
    testRedisUrl();
  });

  afterEach(async () => {
    await Promise.all(buses.splice(0).map((bus) => bus.close()));
    await Promise.all(
      connections.splice(0).map((connection) => connection.quit().catch(() => connection.disconnect())),
    );
  });

  it('delivers every invalidation to every subscribed bus, the publishing one included', async () => {
    channel = `test:key-invalidation:${randomUUID()}`;
    const first = openBus();
    const second = openBus();
    const atFirst = nextInvalidations(first.bus, 2);
    const atSecond = nextInvalidations(second.bus, 2);
    await Promise.all([
      first.bus.whenSubscribed(),
      second.bus.whenSubscribed(),
      whenRedisReady(first.publisher, 5_000),
    ]);
    await first.bus.publish({ hashes: [hashA], version: 3 });
    await first.bus.publish({ hashes: [hashA, hashB], version: 4 });
    const expected = [
      { hashes: [hashA], version: 3 },
      { hashes: [hashA, hashB], version: 4 },
    ];
    expect(await atFirst).toEqual(expected);
    expect(await atSecond).toEqual(expected);
  });

  it('ignores malformed messages on the channel and logs them, then carries on', async () => {
    channel = `test:key-invalidation:${randomUUID()}`;
    const recorded = recordingLogger();
    const { bus, publisher } = openBus({ logger: recorded.logger });
    const received = nextInvalidations(bus, 1);
    await Promise.all([bus.whenSubscribed(), whenRedisReady(publisher, 5_000)]);
    await publisher.publish(channel, 'not json');
    await publisher.publish(channel, JSON.stringify({ hashes: 'not a list', version: 1 }));
    await bus.publish({ hashes: [hashB], version: 9 });
    expect(await received).toEqual([{ hashes: [hashB], version: 9 }]);
    expect(recorded.lines.filter((line) => line.message.includes('malformed'))).toHaveLength(2);
  });

  it('refuses to publish an invalidation of the wrong shape', async () => {
    channel = `test:key-invalidation:${randomUUID()}`;
    const { bus } = openBus();
    await expect(bus.publish({ hashes: [hashA], version: -1 })).rejects.toThrow(TypeError);
  });

  it('stops calling a listener once it unsubscribes, and keeps calling the others', async () => {
    channel = `test:key-invalidation:${randomUUID()}`;
    const { bus, publisher } = openBus();
    const dropped: KeyInvalidation[] = [];
    const unsubscribe = bus.subscribe((invalidation) => dropped.push(invalidation));
    const kept = nextInvalidations(bus, 2);
    await Promise.all([bus.whenSubscribed(), whenRedisReady(publisher, 5_000)]);
    await bus.publish({ hashes: [hashA], version: 1 });
    await waitFor(() => dropped.length === 1, 5_000, 'the first invalidation');
    unsubscribe();
    await bus.publish({ hashes: [hashA], version: 2 });
    expect((await kept).map((invalidation) => invalidation.version)).toEqual([1, 2]);
    expect(dropped.map((invalidation) => invalidation.version)).toEqual([1]);
  });

  it('subscribes again after its connection is killed, and says so through onResubscribed', async () => {
    channel = `test:key-invalidation:${randomUUID()}`;
    let resubscriptions = 0;
    const { bus, publisher, subscriber } = openBus({ onResubscribed: () => resubscriptions++ });
    const received = nextInvalidations(bus, 1, 10_000);
    await Promise.all([bus.whenSubscribed(), whenRedisReady(publisher, 5_000)]);
    const subscriberId = await subscriber.client('ID');
    await publisher.client('KILL', 'ID', String(subscriberId));
    await waitFor(() => resubscriptions === 1, 10_000, 'the resubscription');
    expect(await subscriber.client('ID')).not.toBe(subscriberId);
    await bus.publish({ hashes: [hashA], version: 5 });
    expect(await received).toEqual([{ hashes: [hashA], version: 5 }]);
  });

  it('notices a connection that went silent without closing, reconnects and resubscribes', async () => {
    channel = `test:key-invalidation:${randomUUID()}`;
    const proxy = await startFreezableProxy(new URL(testRedisUrl()));
    let cleanUp = async () => {};
    try {
      let resubscriptions = 0;
      const { logger } = recordingLogger();
      const publisher = openRedisConnection(testRedisUrl(), { logger });
      const subscriber = openRedisSubscriberConnection(`redis://127.0.0.1:${proxy.port}`, { logger });
      connections.push(publisher);
      const bus = createRedisKeyInvalidationBus({
        publisher,
        subscriber,
        logger,
        channel,
        heartbeatIntervalMs: 100,
        heartbeatTimeoutMs: 300,
        onResubscribed: () => resubscriptions++,
      });
      cleanUp = async () => {
        await bus.close();
        subscriber.disconnect();
      };
      const received: KeyInvalidation[] = [];
      bus.subscribe((invalidation) => received.push(invalidation));
      await Promise.all([bus.whenSubscribed(), whenRedisReady(publisher, 5_000)]);

      proxy.freezeOpenConnections();
      await bus.publish({ hashes: [hashA], version: 1 }); // lost: the frozen connection never delivers it
      await waitFor(() => resubscriptions === 1, 10_000, 'the heartbeat to reconnect');
      await bus.publish({ hashes: [hashA], version: 2 });
      await waitFor(() => received.length > 0, 5_000, 'an invalidation after the reconnect');
      expect(received).toEqual([{ hashes: [hashA], version: 2 }]);
    } finally {
      await cleanUp();
      await proxy.close();
    }
  });
});

describe('createRedisKeyInvalidationBus across two processes (real Redis)', () => {
  let child: ChildProcessWithoutNullStreams;
  const childLines: Record<string, unknown>[] = [];
  let channel: string;

  beforeAll(async () => {
    channel = `test:key-invalidation:${randomUUID()}`;
    child = spawn(
      process.execPath,
      ['adapters/node/redis-key-invalidation-bus.test-process.ts', testRedisUrl(), channel],
      {
        cwd: new URL('../..', import.meta.url).pathname,
      },
    );
    let errors = '';
    child.stderr.on('data', (chunk) => (errors += chunk));
    createInterface({ input: child.stdout }).on('line', (line) => childLines.push(JSON.parse(line)));
    await waitFor(
      () => childLines.some((line) => line.subscribed) || child.exitCode !== null,
      20_000,
      'the child',
    ).catch((error) => {
      throw new Error(`${error.message}; child stderr: ${errors}`);
    });
    if (child.exitCode !== null) throw new Error(`the child exited with ${child.exitCode}: ${errors}`);
  }, 30_000);

  afterAll(async () => {
    child?.stdin.end();
    if (child && child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
  });

  it('carries invalidations both ways between two processes', async () => {
    const { logger } = recordingLogger();
    const publisher = openRedisConnection(testRedisUrl(), { logger });
    const subscriber = openRedisSubscriberConnection(testRedisUrl(), { logger });
    const bus = createRedisKeyInvalidationBus({ publisher, subscriber, logger, channel });
    try {
      const received = nextInvalidations(bus, 2);
      await Promise.all([bus.whenSubscribed(), whenRedisReady(publisher, 5_000)]);

      await bus.publish({ hashes: [hashA], version: 11 });
      await waitFor(() => childLines.some((line) => line.received), 5_000, 'the child to receive');
      expect(childLines.filter((line) => line.received)).toEqual([{ received: { hashes: [hashA], version: 11 } }]);

      child.stdin.write(`${JSON.stringify({ publish: { hashes: [hashB], version: 12 } })}\n`);
      expect(await received).toEqual([
        { hashes: [hashA], version: 11 },
        { hashes: [hashB], version: 12 },
      ]);
      // The child hears its own invalidation too.
      await waitFor(() => childLines.filter((line) => line.received).length === 2, 5_000, 'the child to hear itself');
    } finally {
      await bus.close();
      await Promise.all([publisher.quit(), subscriber.quit()]);
    }
  });
});
