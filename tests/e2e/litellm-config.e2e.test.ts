import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { e2eEnvironment, e2eMasterKey, readFixture } from './e2e-fixtures.ts';
import type { RunningGateway } from './gateway-process.ts';
import { gatewayRuntimes } from './gateway-starters.ts';

const expectedText = readFixture<{ choices: { message: { content: string } }[] }>('openai-compatible', 'text.json')
  .choices[0]?.message.content;

/** A LiteLLM proxy config as its docs show one: two entries of one group, a fallback, parts torii does not take. */
function litellmConfig(mockUrl: string): Record<string, unknown> {
  return {
    model_list: [
      {
        model_name: 'gpt-text',
        litellm_params: { model: 'openai/text', api_base: `${mockUrl}/v1`, api_key: 'os.environ/MOCK_UPSTREAM_KEY' },
      },
      {
        model_name: 'always-failing',
        litellm_params: {
          model: 'openai/error-500',
          api_base: `${mockUrl}/v1`,
          api_key: 'os.environ/MOCK_UPSTREAM_KEY',
        },
      },
    ],
    router_settings: { num_retries: 0, fallbacks: [{ 'always-failing': ['gpt-text'] }] },
    litellm_settings: { success_callback: ['langfuse'] },
  };
}

// torii started from a LiteLLM config.yaml on each runtime, called with the real openai SDK.
for (const runtime of gatewayRuntimes) {
  describe(`a LiteLLM proxy config on ${runtime.name}`, { timeout: 120_000 }, () => {
    let mock: MockUpstream;
    let gateway: RunningGateway;

    beforeAll(async () => {
      mock = await startMockUpstream();
      gateway = await runtime.start(litellmConfig(mock.url), e2eEnvironment);
    }, 180_000);

    afterAll(async () => {
      await gateway?.stop();
      await mock?.close();
    });

    it('serves its model_name with the key from os.environ/, falls back as its router_settings say, and logs what it did not take', async () => {
      const client = new OpenAI({ baseURL: `${gateway.baseURL}/v1`, apiKey: e2eMasterKey, maxRetries: 0 });
      const answer = await client.chat.completions.create({
        model: 'gpt-text',
        messages: [{ role: 'user', content: 'Hello' }],
      });
      expect(answer.choices[0]?.message.content).toBe(expectedText);
      const fallenBack = await client.chat.completions
        .create({ model: 'always-failing', messages: [{ role: 'user', content: 'Hello' }] })
        .withResponse();
      expect(fallenBack.data.choices[0]?.message.content).toBe(expectedText);
      expect(fallenBack.response.headers.get('x-torii-model-group')).toBe('gpt-text');
      // Logged once at start; workerd's console lines reach wrangler's output later: wait for it.
      await gateway.waitForOutput('litellm_settings.success_callback', 60_000);
    });
  });
}
