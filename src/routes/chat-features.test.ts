import { describe, expect, it } from 'vitest';
import type { CanonicalChatFeature, CanonicalChatRequest } from '../canonical/canonical-chat-request.ts';
import { unsupportedChatFeature } from './chat-features.ts';

const all: CanonicalChatFeature[] = ['n', 'logprobs', 'top-k', 'files', 'images', 'json-schema', 'tools', 'reasoning'];

function request(overrides: Partial<CanonicalChatRequest>): CanonicalChatRequest {
  return {
    model: 'm',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    stream: false,
    streamIncludeUsage: false,
    ...overrides,
  };
}

describe('unsupportedChatFeature', () => {
  it.each([
    [{ n: 2 }, 'n'],
    [{ logprobs: true }, 'logprobs'],
    [{ topLogprobs: 2 }, 'logprobs'],
    [{ topK: 40 }, 'top-k'],
    [
      { messages: [{ role: 'user', content: [{ type: 'file', mediaType: 'application/pdf', data: 'JVBERi0=' }] }] },
      'files',
    ],
    [{ messages: [{ role: 'user', content: [{ type: 'image', url: 'https://x/y.png' }] }] }, 'images'],
    [{ responseFormat: { type: 'json_schema', name: 'r', schema: {} } }, 'json-schema'],
    [{ tools: [{ name: 't', parameters: {} }] }, 'tools'],
    [{ reasoningEffort: 'high' }, 'reasoning'],
    [{ reasoningBudgetTokens: 2048 }, 'reasoning'],
  ] as [Partial<CanonicalChatRequest>, CanonicalChatFeature][])('finds %o used as %s', (overrides, feature) => {
    const used = request(overrides);
    expect(
      unsupportedChatFeature(
        used,
        all.filter((candidate) => candidate !== feature),
      ),
    ).toBe(feature);
    expect(unsupportedChatFeature(used, all)).toBeUndefined();
  });

  it('does not count defaults as use: n = 1, logprobs false, reasoning none, an empty tool list', () => {
    const plain = request({ n: 1, logprobs: false, reasoningEffort: 'none', tools: [] });
    expect(unsupportedChatFeature(plain, [])).toBeUndefined();
  });
});
