import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../e2e/gateway-process.ts';
import { gatewayRuntimes } from '../e2e/gateway-starters.ts';
import { chaosClient, chaosMasterKey, collectChatStream, isLive } from './chaos-client.ts';
import {
  bigWriteDeltaCount,
  burstText,
  hostileEnvironment,
  hostileGatewayConfig,
  startHostileUpstream,
  type HostileUpstream,
} from './hostile-upstream.ts';

// Defect: an upstream writing a few hundred SSE events back to back wedged a Node worker at 100% CPU (undici handed
// the dispatch response zero-length chunks after a resume, each queued and paused on). Every byte of a 100,000-event
// burst and of one 10 MB write must arrive, through pass-through (openai/...) and translation (anthropic/...).
describe.each(gatewayRuntimes)('a burst of streamed data on $name', (runtime) => {
  let upstream: HostileUpstream;
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    upstream = await startHostileUpstream();
    gateway = await runtime.start(hostileGatewayConfig(upstream.url, ['burst:100000', 'big-write:10']), {
      ...hostileEnvironment,
      TORII_MASTER_KEY: chaosMasterKey,
    });
    client = chaosClient(gateway, 110_000);
  });

  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
  });

  it.each(['openai', 'anthropic'])('delivers all 100,000 events of one burst through %s', async (dialect) => {
    const stream = await client.chat.completions.create({
      model: `${dialect}/burst:100000`,
      stream: true,
      messages: [{ role: 'user', content: 'Count' }],
    });
    const result = await collectChatStream(stream);
    expect(result.error).toBeUndefined();
    expect(result.text.length).toBe(burstText(100_000).length);
    expect(result.text).toBe(burstText(100_000));
    expect(result.finishReasons).toEqual(['stop']);
    expect(await isLive(gateway)).toBe(true);
  });

  it.each(['openai', 'anthropic'] as const)('delivers every byte of one 10 MB write through %s', async (dialect) => {
    const stream = await client.chat.completions.create({
      model: `${dialect}/big-write:10`,
      stream: true,
      messages: [{ role: 'user', content: 'Count' }],
    });
    const result = await collectChatStream(stream);
    expect(result.error).toBeUndefined();
    expect(result.text).toBe(burstText(bigWriteDeltaCount(10, dialect)));
    expect(result.finishReasons).toEqual(['stop']);
    expect(await isLive(gateway)).toBe(true);
  });

  // The gateway hands a socket read at a time to the client (coalesced): a client that stops reading mid-burst must
  // pause the upstream (bounded holding), leave the worker serving others, and still get every byte once it reads on.
  it.each(['openai', 'anthropic'] as const)(
    'holds a 10 MB write for a client that stops reading, serves others meanwhile, then delivers it all through %s',
    async (dialect) => {
      const stream = await client.chat.completions.create({
        model: `${dialect}/big-write:10`,
        stream: true,
        messages: [{ role: 'user', content: 'Count' }],
      });
      const iterator = stream[Symbol.asyncIterator]();
      const parts: string[] = [];
      const first = await iterator.next();
      expect(first.done).toBe(false);
      for (const choice of first.value?.choices ?? []) if (choice.delta.content) parts.push(choice.delta.content);
      // The client reads nothing while the gateway answers ten other requests.
      for (let index = 0; index < 10; index++) expect(await isLive(gateway)).toBe(true);
      const finishReasons: string[] = [];
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
        for (const choice of next.value.choices) {
          if (choice.delta.content) parts.push(choice.delta.content);
          if (choice.finish_reason) finishReasons.push(choice.finish_reason);
        }
      }
      expect(parts.join('')).toBe(burstText(bigWriteDeltaCount(10, dialect)));
      expect(finishReasons).toEqual(['stop']);
    },
  );
});
