import { describe, expect, it } from 'vitest';
import type { CanonicalChatRequest } from '../canonical/canonical-chat-request.ts';
import { countChatTokens } from './count-chat-tokens.ts';
import { estimatePdfTokens, imageTokenEstimate } from './media-token-estimate.ts';
import type { Tokenizer } from './token-counter.ts';

/** One token a space-separated word: the arithmetic around the tokenizer is then countable by hand. */
const wordTokenizer: Tokenizer = {
  encoding: 'words',
  countTokens: (text) => text.split(' ').filter((word) => word.length > 0).length,
};

const request = (fields: Partial<CanonicalChatRequest>): CanonicalChatRequest => ({
  model: 'group',
  messages: [],
  stream: false,
  streamIncludeUsage: false,
  ...fields,
});

describe('countChatTokens', () => {
  it('counts 3 tokens of reply priming for an empty conversation', () => {
    expect(countChatTokens(request({}), wordTokenizer)).toBe(3);
  });

  it("counts 3 tokens a message beside its role and content, 1 more beside a name's own", () => {
    const counted = countChatTokens(
      request({
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: [{ type: 'text', text: 'hello there friend' }], name: 'ada lovelace' },
        ],
      }),
      wordTokenizer,
    );
    // priming 3; system: 3 + role 1 + 2 words; user: 3 + role 1 + 3 words + name (1 + 2 words)
    expect(counted).toBe(3 + (3 + 1 + 2) + (3 + 1 + 3 + 1 + 2));
  });

  it('counts tool calls, tool messages, tool definitions and a JSON-schema response format', () => {
    const parameters = { type: 'object', properties: { path: { type: 'string' } } };
    const schema = { type: 'object' };
    const counted = countChatTokens(
      request({
        messages: [
          {
            role: 'assistant',
            content: [],
            toolCalls: [{ id: 'call_1', name: 'read file', arguments: '{"path": "a b"}' }],
          },
          { role: 'tool', toolCallId: 'call_1', content: 'three word result' },
        ],
        tools: [{ name: 'read_file', description: 'Reads a file', parameters }],
        responseFormat: { type: 'json_schema', name: 'answer', schema },
      }),
      wordTokenizer,
    );
    const json = (value: unknown) => wordTokenizer.countTokens(JSON.stringify(value));
    expect(counted).toBe(
      3 +
        (3 + 1 + 2 + 3) + // assistant: role, tool name (2 words), arguments (3 words)
        (3 + 1 + 3) + // tool: role, content
        (1 + 3 + json(parameters)) + // tool definition: name, description, schema
        (1 + json(schema)), // response format: name, schema
    );
  });

  it('counts images and files as the estimate does, never through the tokenizer', () => {
    const pdf = 'A'.repeat(40_000);
    const counted = countChatTokens(
      request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', url: 'data:image/png;base64,AAAA' },
              { type: 'file', mediaType: 'application/pdf', data: pdf },
              { type: 'file', mediaType: 'application/pdf', url: 'https://example.com/a.pdf' },
            ],
          },
        ],
      }),
      { encoding: 'never', countTokens: (text) => (text === 'user' ? 1 : Number.NaN) },
    );
    expect(counted).toBe(3 + 3 + 1 + imageTokenEstimate + estimatePdfTokens(pdf) + estimatePdfTokens(undefined));
    expect(estimatePdfTokens(pdf)).toBe(15_000); // 30,000 bytes: 10 pages of 1,500
  });

  it('does not ask the tokenizer about empty texts', () => {
    const asked: string[] = [];
    countChatTokens(
      request({ messages: [{ role: 'assistant', content: [{ type: 'text', text: '' }], toolCalls: [] }] }),
      { encoding: 'recording', countTokens: (text) => (asked.push(text), 1) },
    );
    expect(asked).toEqual(['assistant']);
  });
});
