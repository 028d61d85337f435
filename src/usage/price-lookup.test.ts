import { describe, expect, it } from 'vitest';
import { lookupPrice, normalisedModelNames } from './price-lookup.ts';
import { bundledPriceTable } from './price-table.ts';

describe('bundledPriceTable', () => {
  it('holds only normalised names with finite, non-negative rates', () => {
    for (const [name, price] of Object.entries(bundledPriceTable)) {
      const provider = name.includes('/') ? name.slice(0, name.indexOf('/')) : undefined;
      const unqualified = provider === undefined ? name : name.slice(provider.length + 1);
      // Every entry is reachable under its own name (lower case, no routing prefix).
      expect(normalisedModelNames(unqualified)[0]).toBe(unqualified);
      expect(lookupPrice(unqualified, { provider })?.matchedName).toBe(name);
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

describe('lookupPrice', () => {
  it.each([
    ['gpt-4o', 'gpt-4o'],
    ['GPT-4o', 'gpt-4o'],
    ['gpt-4o-2024-08-06', 'gpt-4o'],
    ['openai/gpt-4o', 'gpt-4o'],
    ['openrouter/openai/gpt-4o-mini-2024-07-18', 'gpt-4o-mini'],
    ['gpt-4.1-mini-2025-04-14', 'gpt-4.1-mini'],
    ['o3-2025-04-16', 'o3'],
    ['gpt-3.5-turbo-0125', 'gpt-3.5-turbo'],
    ['chatgpt-4o-latest', 'chatgpt-4o'],
    ['claude-sonnet-4-20250514', 'claude-sonnet-4'],
    ['claude-3-5-sonnet-latest', 'claude-3-5-sonnet'],
    ['anthropic.claude-3-5-sonnet-20240620-v1:0', 'claude-3-5-sonnet'],
    ['us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'claude-sonnet-4-5'],
    ['claude-opus-4-1@20250805', 'claude-opus-4-1'],
    ['mistral-large-2411', 'mistral-large'],
    ['mistral-small-latest', 'mistral-small'],
    ['grok-4-0709', 'grok-4'],
    ['gemini-2.0-flash-001', 'gemini-2.0-flash'],
  ])('finds %s under %s', (model, matchedName) => {
    expect(lookupPrice(model)?.matchedName).toBe(matchedName);
  });

  it('prefers an exact snapshot entry over its family', () => {
    expect(lookupPrice('gpt-4o-2024-05-13')?.price.inputPerMillion).toBe(5);
    expect(lookupPrice('gpt-4o-2024-11-20')?.price.inputPerMillion).toBe(2.5);
  });

  it('uses provider-qualified entries only for that provider', () => {
    expect(lookupPrice('openai/gpt-oss-120b', { provider: 'groq' })?.matchedName).toBe('groq/gpt-oss-120b');
    expect(lookupPrice('meta-llama/llama-4-scout-17b-16e-instruct', { provider: 'Groq' })?.matchedName).toBe(
      'groq/llama-4-scout-17b-16e-instruct',
    );
    expect(lookupPrice('openai/gpt-oss-120b', { provider: 'together' })).toBeUndefined();
  });

  it('does not price a model by prefix', () => {
    expect(lookupPrice('gpt-4o-audio-preview')).toBeUndefined();
    expect(lookupPrice('my-own-finetune')).toBeUndefined();
    expect(lookupPrice('')).toBeUndefined();
    expect(lookupPrice('toString')).toBeUndefined();
  });

  it('merges an override over the bundled price', () => {
    expect(lookupPrice('gpt-4o', { override: { inputPerMillion: 2 } })).toEqual({
      price: { inputPerMillion: 2, cachedInputPerMillion: 1.25, outputPerMillion: 10 },
      source: 'override',
      matchedName: 'gpt-4o',
    });
  });

  it('prices an unknown model from an override alone, missing rates at 0', () => {
    expect(lookupPrice('azure-deployment-7', { override: { inputPerMillion: 3, outputPerMillion: 12 } })).toEqual({
      price: { inputPerMillion: 3, outputPerMillion: 12 },
      source: 'override',
      matchedName: null,
    });
    expect(lookupPrice('azure-deployment-7', { override: { outputPerMillion: 12 } })?.price).toEqual({
      inputPerMillion: 0,
      outputPerMillion: 12,
    });
  });

  it('ignores an empty override', () => {
    expect(lookupPrice('gpt-4o', { override: {} })?.source).toBe('bundled');
    expect(lookupPrice('unknown-model', { override: {} })).toBeUndefined();
  });

  it('searches a table given in place of the bundled one', () => {
    const table = { 'house-model': { inputPerMillion: 1, outputPerMillion: 2 } };
    expect(lookupPrice('house-model-2025-01-01', { table })?.price.outputPerMillion).toBe(2);
    expect(lookupPrice('gpt-4o', { table })).toBeUndefined();
  });
});
