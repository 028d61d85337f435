import { describe, expect, it } from 'vitest';
import { lookupPrice, normalisedModelNames, type PriceLookupOptions } from './price-lookup.ts';
import { bundledPriceTable } from './price-table.ts';

/** Looks up in the bundled table, as the adapters' gateways do. */
const find = (model: string, options: PriceLookupOptions = {}) =>
  lookupPrice(model, { table: bundledPriceTable, ...options });

describe('bundledPriceTable', () => {
  it('holds only normalised names with finite, non-negative rates', () => {
    for (const [name, price] of Object.entries(bundledPriceTable)) {
      const provider = name.includes('/') ? name.slice(0, name.indexOf('/')) : undefined;
      const unqualified = provider === undefined ? name : name.slice(provider.length + 1);
      // Every entry is reachable under its own name (lower case, no routing prefix).
      expect(normalisedModelNames(unqualified)[0]).toBe(unqualified);
      expect(find(unqualified, { provider })?.matchedName).toBe(name);
      for (const rate of Object.values(price)) {
        expect(Number.isFinite(rate) && rate >= 0, `${name}: ${rate}`).toBe(true);
      }
      expect(price.cachedInputPerMillion ?? 0, name).toBeLessThanOrEqual(price.inputPerMillion);
    }
  });

  it('derives Anthropic cache rates from the input rate without binary noise', () => {
    expect(bundledPriceTable['claude-3-5-haiku']).toEqual({
      inputPerMillion: 0.8,
      outputPerMillion: 4,
      cachedInputPerMillion: 0.08,
      cacheWriteInputPerMillion: 1,
    });
  });
});

describe('the generated table', () => {
  // One model of every provider torii ships a translator for, named as its deployments name it.
  it.each([
    ['gpt-4o', 'azure', 'gpt-4o'],
    ['claude-sonnet-4-5@20250929', 'vertex-anthropic', 'claude-sonnet-4-5'],
    ['us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'bedrock', 'bedrock/claude-sonnet-4-5-20250929'],
    ['amazon.nova-pro-v1:0', 'bedrock', 'bedrock/amazon.nova-pro-v1:0'],
    ['gemini-2.5-flash', 'gemini', 'gemini-2.5-flash'],
    ['gemini-2.5-pro', 'vertex', 'gemini-2.5-pro'],
    ['gemini-embedding-001', 'gemini', 'gemini-embedding-001'],
    ['command-a-03-2025', 'cohere', 'command-a-03-2025'],
    ['embed-v4.0', 'cohere', 'embed-v4.0'],
    ['llama-3.3-70b-versatile', 'groq', 'groq/llama-3.3-70b-versatile'],
    ['claude-haiku-4-5', 'anthropic', 'claude-haiku-4-5'],
  ])('prices %s on %s (as %s)', (model, provider, matchedName) => {
    const match = find(model, { provider });
    expect(match?.matchedName).toBe(matchedName);
    expect(match?.price.inputPerMillion).toBeGreaterThan(0);
  });
});

describe('lookupPrice', () => {
  it.each([
    ['gpt-4o', 'gpt-4o'],
    ['GPT-4o', 'gpt-4o'],
    ['gpt-4o-2024-08-06', 'gpt-4o-2024-08-06'],
    ['openai/gpt-4o', 'gpt-4o'],
    ['openrouter/openai/gpt-4o-mini-2024-07-18', 'gpt-4o-mini-2024-07-18'],
    ['gpt-4.1-mini-2025-04-14', 'gpt-4.1-mini-2025-04-14'],
    ['o3-2025-04-16', 'o3-2025-04-16'],
    ['gpt-3.5-turbo-0125', 'gpt-3.5-turbo-0125'],
    ['chatgpt-4o-latest', 'chatgpt-4o-latest'],
    ['claude-sonnet-4-20250514', 'claude-sonnet-4'],
    ['claude-3-5-sonnet-latest', 'claude-3-5-sonnet'],
    ['anthropic.claude-3-5-sonnet-20240620-v1:0', 'claude-3-5-sonnet'],
    ['us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'claude-sonnet-4-5'],
    ['claude-opus-4-1@20250805', 'claude-opus-4-1'],
    ['mistral-large-2411', 'mistral-large-2411'],
    ['mistral-small-latest', 'mistral-small-latest'],
    ['grok-4-0709', 'grok-4-0709'],
    ['gemini-2.0-flash-001', 'gemini-2.0-flash'],
  ])(
    'finds %s under %s (a snapshot listed by the catalogue under its own name, else its family)',
    (model, matchedName) => {
      expect(find(model)?.matchedName).toBe(matchedName);
    },
  );

  it('prefers an exact snapshot entry over its family', () => {
    expect(find('gpt-4o-2024-05-13')?.price.inputPerMillion).toBe(5);
    expect(find('gpt-4o-2024-11-20')?.price.inputPerMillion).toBe(2.5);
  });

  it('uses provider-qualified entries only for that provider', () => {
    expect(find('openai/gpt-oss-120b', { provider: 'groq' })?.matchedName).toBe('groq/openai/gpt-oss-120b');
    expect(find('meta-llama/llama-4-scout-17b-16e-instruct', { provider: 'Groq' })?.matchedName).toBe(
      'groq/meta-llama/llama-4-scout-17b-16e-instruct',
    );
    expect(find('openai/gpt-oss-120b', { provider: 'together' })?.matchedName).not.toMatch(/^groq\//);
  });

  it('does not price a model by prefix', () => {
    expect(find('gpt-4o-my-own-variant')).toBeUndefined();
    expect(find('my-own-finetune')).toBeUndefined();
    expect(find('')).toBeUndefined();
    expect(find('toString')).toBeUndefined();
  });

  it('merges an override over the bundled price', () => {
    expect(find('gpt-4o', { override: { inputPerMillion: 2 } })).toEqual({
      price: { inputPerMillion: 2, cachedInputPerMillion: 1.25, outputPerMillion: 10 },
      source: 'override',
      matchedName: 'gpt-4o',
    });
  });

  it('prices an unknown model from an override alone, missing rates at 0', () => {
    expect(find('azure-deployment-7', { override: { inputPerMillion: 3, outputPerMillion: 12 } })).toEqual({
      price: { inputPerMillion: 3, outputPerMillion: 12 },
      source: 'override',
      matchedName: null,
    });
    expect(find('azure-deployment-7', { override: { outputPerMillion: 12 } })?.price).toEqual({
      inputPerMillion: 0,
      outputPerMillion: 12,
    });
  });

  it('ignores an empty override', () => {
    expect(find('gpt-4o', { override: {} })?.source).toBe('bundled');
    expect(find('unknown-model', { override: {} })).toBeUndefined();
  });

  it('searches a table given in place of the bundled one', () => {
    const table = { 'house-model': { inputPerMillion: 1, outputPerMillion: 2 } };
    expect(find('house-model-2025-01-01', { table })?.price.outputPerMillion).toBe(2);
    expect(find('gpt-4o', { table })).toBeUndefined();
  });
});
