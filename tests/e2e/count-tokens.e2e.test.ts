import Anthropic from '@anthropic-ai/sdk';
import { encode as encodeCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { encode as encodeO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { e2eEnvironment, e2eMasterKey } from './e2e-fixtures.ts';
import type { RunningGateway } from './gateway-process.ts';
import { denoRuntime, nodeClusterRuntime } from './gateway-starters.ts';

const lookupSchema = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] };

/** A short conversation with a tool round trip, as the Anthropic SDK sends it. */
const conversation = {
  system: 'You are a terse assistant.',
  tools: [{ name: 'lookup', description: 'Looks up a city.', input_schema: lookupSchema }],
  messages: [
    { role: 'user' as const, content: 'Where is the Eiffel Tower?' },
    {
      role: 'assistant' as const,
      content: [{ type: 'tool_use' as const, id: 'toolu_1', name: 'lookup', input: { city: 'Paris' } }],
    },
    { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_1', content: 'France' }] },
  ],
};

/**
 * The conversation's tokens counted by hand as the gateway documents it: the OpenAI cookbook's framing (3 tokens a
 * message plus its role, 3 to prime the reply) around the texts the translated request carries.
 */
function expectedTokens(encode: (text: string) => number[]): number {
  const tokens = (text: string) => encode(text).length;
  const message = (role: string, ...texts: string[]) =>
    3 + tokens(role) + texts.reduce((sum, text) => sum + tokens(text), 0);
  return (
    3 +
    message('system', 'You are a terse assistant.') +
    message('user', 'Where is the Eiffel Tower?') +
    message('assistant', 'lookup', '{"city":"Paris"}') +
    message('tool', 'France') +
    tokens('lookup') +
    tokens('Looks up a city.') +
    tokens(JSON.stringify(lookupSchema))
  );
}

// The Node cluster and Deno lend the gateway gpt-tokenizer; the Worker has none (its bundle stays small), so it answers
// the estimate, as the shared Anthropic suite checks on every runtime.
describe.each([nodeClusterRuntime, denoRuntime])('count_tokens with a tokenizer on $name', (runtime) => {
  let mock: MockUpstream;
  let gateway: RunningGateway;
  let client: Anthropic;

  beforeAll(async () => {
    mock = await startMockUpstream();
    const deployment = (model: string) => ({
      deployments: [{ provider: 'openai', model, baseURL: `${mock.url}/v1`, apiKey: '${MOCK_UPSTREAM_KEY}' }],
    });
    gateway = await runtime.start(
      {
        modelGroups: {
          'gpt-4o': deployment('gpt-4o'),
          legacy: deployment('gpt-4-turbo'),
          llama: deployment('llama-3.3-70b-versatile'),
        },
      },
      e2eEnvironment,
    );
    client = new Anthropic({ baseURL: gateway.baseURL, apiKey: e2eMasterKey, maxRetries: 0, timeout: 20_000 });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('counts a gpt-4o deployment exactly with o200k_base, a gpt-4-turbo one with cl100k_base, without the upstream', async () => {
    const o200k = await client.messages.countTokens({ model: 'gpt-4o', ...conversation }).withResponse();
    expect(o200k.response.headers.get('x-torii-token-count')).toBe('tokenizer:o200k_base');
    expect(o200k.data.input_tokens).toBe(expectedTokens(encodeO200k));
    const cl100k = await client.messages.countTokens({ model: 'legacy', ...conversation }).withResponse();
    expect(cl100k.response.headers.get('x-torii-token-count')).toBe('tokenizer:cl100k_base');
    expect(cl100k.data.input_tokens).toBe(expectedTokens(encodeCl100k));
    expect(mock.requests).toEqual([]);
  });

  it('keeps the estimate for a model family it has no tokenizer for', async () => {
    const estimated = await client.messages.countTokens({ model: 'llama', ...conversation }).withResponse();
    expect(estimated.response.headers.get('x-torii-token-count')).toBe('estimate');
    expect(estimated.data.input_tokens).toBeGreaterThan(0);
  });
});
