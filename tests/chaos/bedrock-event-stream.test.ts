import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../e2e/gateway-process.ts';
import { gatewayRuntimes } from '../e2e/gateway-starters.ts';
import { chaosClient, chaosMasterKey, collectChatStream, isLive } from './chaos-client.ts';
import { startHostileBedrock, type HostileBedrock } from './hostile-bedrock-upstream.ts';
import { hostileServerLimits } from './hostile-upstream.ts';

const behaviours = [
  'text',
  'bad-message-crc',
  'bad-prelude-crc',
  'truncated-prelude',
  'cut-message',
  'huge-prelude',
  'stall',
  'throttled',
  'burst:5000',
];

function bedrockConfig(url: string): Record<string, unknown> {
  const modelGroups: Record<string, unknown> = {};
  for (const behaviour of behaviours) {
    modelGroups[`bedrock/${behaviour}`] = {
      deployments: [
        {
          provider: 'bedrock',
          model: behaviour,
          baseURL: url,
          options: { region: 'us-east-1', accessKeyId: 'AKIACHAOSUPSTREAM001', secretAccessKey: 'chaos-secret-key' },
        },
      ],
      retry: { retries: 0 },
    };
  }
  return { server: hostileServerLimits, modelGroups };
}

// Bedrock streams are binary (AWS event stream): a damaged frame must end the client's stream with a clear error in
// its own envelope, never a hang, a crash or a buffered 100 MB; the worker stays responsive.
describe.each(gatewayRuntimes)('a misbehaving Bedrock event stream on $name', (runtime) => {
  let upstream: HostileBedrock;
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    upstream = await startHostileBedrock();
    gateway = await runtime.start(bedrockConfig(upstream.url), { TORII_MASTER_KEY: chaosMasterKey });
    client = chaosClient(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
  });

  const stream = (model: string) =>
    client.chat.completions
      .create({ model, stream: true, messages: [{ role: 'user', content: 'Hello' }] })
      .then(collectChatStream);

  it('streams an intact answer whole', async () => {
    const result = await stream('bedrock/text');
    expect(result.error).toBeUndefined();
    expect(result.text.length).toBeGreaterThan(0);
    expect(result.finishReasons).toEqual(['stop']);
  });

  it.each([
    ['bad-message-crc', /CRC/i],
    ['bad-prelude-crc', /CRC/i],
    ['truncated-prelude', /cut off|ended|truncated|incomplete/i],
    ['cut-message', /cut off|ended|truncated|incomplete/i],
    ['huge-prelude', /message of 104857600 bytes \(the most is/],
  ])('ends the stream with a clear error on %s, not a hang', async (behaviour, message) => {
    const result = await stream(`bedrock/${behaviour}`);
    expect(result.error).toBeInstanceOf(OpenAI.APIError);
    expect(String((result.error as Error).message)).toMatch(message);
    expect(await isLive(gateway)).toBe(true);
  });

  it('ends a stream that goes silent with an error event', async () => {
    const result = await stream('bedrock/stall');
    expect(result.error).toBeInstanceOf(OpenAI.APIError);
    expect(String((result.error as Error).message)).toMatch(/sent nothing for 1500 ms/);
  });

  it("passes Bedrock's throttling exception on mid-stream, keeping its message", async () => {
    const result = await stream('bedrock/throttled');
    expect(result.error).toBeInstanceOf(OpenAI.APIError);
    expect(String((result.error as Error).message)).toContain('Too many requests');
  });

  it('relays a burst of 5,000 deltas in one write whole', async () => {
    const result = await stream('bedrock/burst:5000');
    expect(result.error).toBeUndefined();
    expect(result.text).toContain(' 4999');
  });

  it('still answers after all of it', async () => {
    const answer = await client.chat.completions.create({
      model: 'bedrock/text',
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(answer.choices[0]?.message.content?.length).toBeGreaterThan(0);
  });
});
