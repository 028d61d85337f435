import type { Redis } from 'ioredis';
import type { GatewayLogger } from '../../src/services.ts';

/** What {@link createRedisPubSubChannel} is made with. */
export interface RedisPubSubChannelOptions<Message> {
  /** A command connection (`openRedisConnection`); PUBLISH goes through it. */
  publisher: Redis;
  /** A subscriber connection (`openRedisSubscriberConnection`); channels may share one, nothing else may use it. */
  subscriber: Redis;
  logger: GatewayLogger;
  channel: string;
  /** What the channel carries, for log lines (`key invalidation`). */
  label: string;
  /** A message's text read back, or undefined when it is malformed (logged and dropped, never handed on). */
  parse(text: string): Message | undefined;
  /** Called each time the subscription is confirmed again after a reconnect (messages meanwhile were lost). */
  onResubscribed?: () => void;
  /** How often the subscriber connection is checked with a PING, in ms; 0 turns the check off. Default 5000. */
  heartbeatIntervalMs?: number;
  /** How long a PING may go unanswered before the connection is dropped and made again, in ms. Default 2000. */
  heartbeatTimeoutMs?: number;
}

/** One pub/sub channel: publish text, receive parsed messages. */
export interface RedisPubSubChannel<Message> {
  publish(text: string): Promise<void>;
  /** Calls `listener` for every message on the channel, this process's own included; returns unsubscribe. */
  subscribe(listener: (message: Message) => void): () => void;
  /** Resolves once Redis has confirmed the current subscription (at once when nobody listens). */
  whenSubscribed(): Promise<void>;
  /** Stops the heartbeat, unsubscribes and drops every listener. The connections stay open: they are the caller's. */
  close(): Promise<void>;
}

/**
 * A Redis pub/sub channel on a dedicated subscriber connection, at most once: a message published while a subscriber
 * is disconnected never reaches it. It subscribes again on every reconnect (then calls `onResubscribed`), and a PING
 * every `heartbeatIntervalMs` that gets no answer within `heartbeatTimeoutMs` drops a connection that went silent
 * without closing, which leads to a reconnect. Listeners only ever see messages `parse` accepted.
 *
 * @example
 * ```ts
 * const channel = createRedisPubSubChannel({ publisher, subscriber, logger, channel: 'torii:x', label: 'x', parse });
 * channel.subscribe((message) => handle(message));
 * await channel.publish(JSON.stringify(message));
 * ```
 */
export function createRedisPubSubChannel<Message>(
  options: RedisPubSubChannelOptions<Message>,
): RedisPubSubChannel<Message> {
  const { publisher, subscriber, logger } = options;
  const { channel, label } = options;
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? 5_000;
  const heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? 2_000;
  const listeners = new Set<(message: Message) => void>();
  /** The current SUBSCRIBE, while anybody listens. */
  let subscription: Promise<void> | undefined;
  /** Whether the subscriber has been ready before: a later `ready` is a reconnect. */
  let connectedBefore = subscriber.status === 'ready';
  let heartbeatRunning = false;

  const subscribeChannel = (): Promise<void> => {
    const confirmed = subscriber.subscribe(channel).then(() => undefined);
    confirmed.catch((error: unknown) => logger.warn(`${label} subscribe failed`, { channel, error: String(error) }));
    return confirmed;
  };

  const onMessage = (messageChannel: string, message: string) => {
    if (messageChannel !== channel) return;
    const parsed = options.parse(message);
    if (parsed === undefined) {
      logger.warn(`ignored a malformed ${label} message`, { channel, message: message.slice(0, 200) });
      return;
    }
    for (const listener of listeners) {
      try {
        listener(parsed);
      } catch (error) {
        logger.error(`${label} listener failed`, { error: String(error) });
      }
    }
  };

  const onReady = () => {
    if (!connectedBefore) {
      // The first connection: a SUBSCRIBE issued before it waited in the offline queue and goes out now.
      connectedBefore = true;
      return;
    }
    if (listeners.size === 0) return;
    const resubscribed = subscribeChannel();
    subscription = resubscribed;
    resubscribed.then(
      () => {
        logger.info(`${label} subscription restored after a reconnect`, { channel });
        options.onResubscribed?.();
      },
      () => {},
    );
  };

  const checkSubscriber = async () => {
    if (heartbeatRunning || listeners.size === 0 || subscriber.status !== 'ready') return;
    heartbeatRunning = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const ping = subscriber.ping();
      ping.catch(() => {});
      await Promise.race([
        ping,
        new Promise((_resolve, reject) => {
          timer = setTimeout(() => reject(new Error('timed out')), heartbeatTimeoutMs);
        }),
      ]);
    } catch (error) {
      logger.warn(`${label} subscriber did not answer PING; reconnecting`, { error: String(error) });
      subscriber.disconnect(true);
    } finally {
      clearTimeout(timer);
      heartbeatRunning = false;
    }
  };

  subscriber.on('message', onMessage);
  subscriber.on('ready', onReady);
  const heartbeat = heartbeatIntervalMs > 0 ? setInterval(checkSubscriber, heartbeatIntervalMs) : undefined;
  heartbeat?.unref();

  return {
    async publish(text) {
      await publisher.publish(channel, text);
    },

    subscribe(listener) {
      // A copy, so adding the same function twice still needs (and allows) two unsubscribes.
      const entry = (message: Message) => listener(message);
      listeners.add(entry);
      if (subscription === undefined) subscription = subscribeChannel();
      return () => {
        if (!listeners.delete(entry) || listeners.size > 0) return;
        subscription = undefined;
        subscriber.unsubscribe(channel).catch(() => {});
      };
    },

    whenSubscribed() {
      return subscription ?? Promise.resolve();
    },

    async close() {
      if (heartbeat !== undefined) clearInterval(heartbeat);
      subscriber.off('message', onMessage);
      subscriber.off('ready', onReady);
      const hadListeners = listeners.size > 0;
      listeners.clear();
      subscription = undefined;
      if (hadListeners && subscriber.status === 'ready') await subscriber.unsubscribe(channel).catch(() => {});
    },
  };
}
