/**
 * A second process for redis-key-invalidation-bus.test.ts, run with `node` (type stripping): opens its own
 * connections, subscribes, and talks over stdio in JSON lines.
 *
 * argv: <redis url> <channel>. Writes `{"subscribed":true}` once subscribed, then `{"received":<invalidation>}` for
 * every invalidation. Reads `{"publish":<invalidation>}` lines from stdin and publishes them, answering
 * `{"published":true}`. Exits when stdin closes.
 */
import { createInterface } from 'node:readline';
import { openRedisConnection, openRedisSubscriberConnection, whenRedisReady } from './redis-connection.ts';
import { createRedisKeyInvalidationBus } from './redis-key-invalidation-bus.ts';

const [url, channel] = process.argv.slice(2);
if (!url || !channel) throw new Error('usage: redis-key-invalidation-bus.test-process.ts <redis url> <channel>');

const write = (line: unknown) => process.stdout.write(`${JSON.stringify(line)}\n`);
const logger = {
  info: () => {},
  warn: (message: string, fields?: Record<string, unknown>) =>
    process.stderr.write(`${message} ${JSON.stringify(fields)}\n`),
  error: (message: string, fields?: Record<string, unknown>) =>
    process.stderr.write(`${message} ${JSON.stringify(fields)}\n`),
};
const publisher = openRedisConnection(url, { logger });
const subscriber = openRedisSubscriberConnection(url, { logger });
const bus = createRedisKeyInvalidationBus({ publisher, subscriber, logger, channel });
bus.subscribe((invalidation) => write({ received: invalidation }));
await Promise.all([bus.whenSubscribed(), whenRedisReady(publisher, 10_000)]);
write({ subscribed: true });

const lines = createInterface({ input: process.stdin });
lines.on('line', async (line) => {
  const command = JSON.parse(line) as { publish: { hashes: string[]; version: number } };
  await bus.publish(command.publish);
  write({ published: true });
});
lines.on('close', async () => {
  await bus.close();
  await Promise.all([publisher.quit(), subscriber.quit()]);
});
