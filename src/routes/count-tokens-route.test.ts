import { describe, expect, it } from 'vitest';
// eslint-disable-next-line no-restricted-imports -- drives the real gateway app, which needs the shipped translators
import { builtinProviders } from '../../providers/index.ts';
import { createMasterKeyAuthenticator } from '../auth/master-key-authenticator.ts';
import { parseGatewayConfig } from '../config/config-parse.ts';
import { validateAnthropicCountTokensRequest } from '../dialects/anthropic-messages/anthropic-messages-request-schema.ts';
import { countAnthropicInputTokensWith } from '../dialects/anthropic-messages/anthropic-messages-token-count.ts';
import { estimateAnthropicInputTokens } from '../dialects/anthropic-messages/anthropic-messages-token-estimate.ts';
import { createGateway } from '../gateway.ts';
import type { GatewayLogger, UpstreamFetch } from '../services.ts';
import type { TokenCounter, Tokenizer } from '../tokens/token-counter.ts';

const masterKey = 'sk-count-tokens-master-key';

const config = parseGatewayConfig({
  modelGroups: {
    gpt: { deployments: [{ provider: 'openai', model: 'gpt-4o', apiKey: 'sk-upstream' }] },
    llama: { deployments: [{ provider: 'groq', model: 'llama-3.3-70b-versatile', apiKey: 'gsk-upstream' }] },
  },
});

/** Counting to a non-Anthropic deployment never calls the upstream. */
const upstreamFetch: UpstreamFetch = () => Promise.reject(new Error('count_tokens must not call the upstream'));

/** One token a character: easy to tell from the estimate (about four characters a token). */
const characterTokenizer: Tokenizer = { encoding: 'o200k_base', countTokens: (text) => text.length };

function gatewayWith(tokenCounter: TokenCounter | undefined) {
  const warnings: { message: string; fields: Record<string, unknown> | undefined }[] = [];
  const logger: GatewayLogger = {
    info() {},
    warn: (message, fields) => warnings.push({ message, fields }),
    error() {},
  };
  const gateway = createGateway({
    config,
    providers: builtinProviders,
    authenticator: createMasterKeyAuthenticator(masterKey),
    services: { upstreamFetch, logger, ...(tokenCounter === undefined ? {} : { tokenCounter }) },
  });
  return { gateway, warnings };
}

const bodyFor = (model: string) => ({
  model,
  system: 'You are terse.',
  messages: [
    { role: 'user', content: 'What is the capital of France?' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'France' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Paris' }] },
  ],
  tools: [{ name: 'lookup', description: 'Looks a fact up.', input_schema: { type: 'object' } }],
});

async function countTokens(gateway: ReturnType<typeof createGateway>, body: Record<string, unknown>) {
  const response = await gateway.request('/v1/messages/count_tokens', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': masterKey, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return {
    inputTokens: ((await response.json()) as { input_tokens: number }).input_tokens,
    method: response.headers.get('x-torii-token-count'),
  };
}

describe('POST /v1/messages/count_tokens to a non-Anthropic deployment', () => {
  it("counts with the runtime's tokenizer for the deployment's upstream model, marked tokenizer:<encoding>", async () => {
    const asked: string[] = [];
    const { gateway } = gatewayWith({
      tokenizerFor: async (model) => (asked.push(model), characterTokenizer),
    });
    const body = bodyFor('gpt');
    const counted = await countTokens(gateway, body);
    expect(asked).toEqual(['gpt-4o']);
    expect(counted.method).toBe('tokenizer:o200k_base');
    expect(counted.inputTokens).toBe(
      countAnthropicInputTokensWith(validateAnthropicCountTokensRequest(body), characterTokenizer),
    );
    expect(counted.inputTokens).not.toBe(estimateAnthropicInputTokens(body));
  });

  it('answers the estimate without a token counter (the Worker)', async () => {
    const { gateway } = gatewayWith(undefined);
    const body = bodyFor('gpt');
    expect(await countTokens(gateway, body)).toEqual({
      inputTokens: estimateAnthropicInputTokens(body),
      method: 'estimate',
    });
  });

  it('answers the estimate when the counter has no tokenizer for the model', async () => {
    const asked: string[] = [];
    const { gateway, warnings } = gatewayWith({ tokenizerFor: async (model) => void asked.push(model) });
    const body = bodyFor('llama');
    expect(await countTokens(gateway, body)).toEqual({
      inputTokens: estimateAnthropicInputTokens(body),
      method: 'estimate',
    });
    expect(asked).toEqual(['llama-3.3-70b-versatile']);
    expect(warnings).toEqual([]);
  });

  it('answers the estimate when the tokenizer cannot be loaded, and logs it once a minute, not once a request', async () => {
    const { gateway, warnings } = gatewayWith({
      tokenizerFor: () => Promise.reject(new Error('Cannot find package gpt-tokenizer')),
    });
    const body = bodyFor('gpt');
    for (let request = 0; request < 3; request++)
      expect(await countTokens(gateway, body)).toEqual({
        inputTokens: estimateAnthropicInputTokens(body),
        method: 'estimate',
      });
    expect(warnings).toEqual([
      {
        message: 'The token counter failed; count_tokens answered the estimate',
        fields: { model: 'gpt-4o', error: 'Cannot find package gpt-tokenizer', code: 'token_counter_failed' },
      },
    ]);
  });

  it('answers the estimate when counting throws (synchronously, inside the tokenizer) or counts nonsense', async () => {
    const body = bodyFor('gpt');
    const broken: Tokenizer[] = [
      {
        encoding: 'o200k_base',
        countTokens: () => {
          throw new RangeError('Maximum call stack size exceeded');
        },
      },
      { encoding: 'o200k_base', countTokens: () => Number.NaN },
      { encoding: 'o200k_base', countTokens: () => -5 },
    ];
    for (const tokenizer of broken) {
      const { gateway } = gatewayWith({ tokenizerFor: async () => tokenizer });
      expect(await countTokens(gateway, body)).toEqual({
        inputTokens: estimateAnthropicInputTokens(body),
        method: 'estimate',
      });
    }
    const { gateway } = gatewayWith({
      tokenizerFor: () => {
        throw new Error('thrown, not rejected');
      },
    });
    expect((await countTokens(gateway, body)).method).toBe('estimate');
  });

  it('answers the estimate for a request only Anthropic could take (a server tool), not a 400', async () => {
    const { gateway } = gatewayWith({ tokenizerFor: async () => characterTokenizer });
    const body = { ...bodyFor('gpt'), tools: [{ type: 'web_search_20250305', name: 'web_search' }] };
    expect(await countTokens(gateway, body)).toEqual({
      inputTokens: estimateAnthropicInputTokens(body),
      method: 'estimate',
    });
  });
});
