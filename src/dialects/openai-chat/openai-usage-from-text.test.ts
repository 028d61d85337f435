import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { usageFromOpenAIText } from './openai-usage-from-text.ts';
import { usageFromOpenAIWire } from './openai-usage-from-wire.ts';

const fixtures = new URL('../../../providers/openai-compatible/__fixtures__/', import.meta.url);

describe('usageFromOpenAIText', () => {
  it.each(['text.json', 'tools.json', 'reasoning.json', 'embeddings.json'])(
    'reads the same usage as a full parse of %s',
    (name) => {
      const text = readFileSync(new URL(name, fixtures), 'utf8');
      const full = usageFromOpenAIWire((JSON.parse(text) as { usage: unknown }).usage);
      expect(full).toBeDefined();
      expect(usageFromOpenAIText(text)).toEqual(full);
    },
  );

  it('skips "usage" inside message content and strings with braces and escapes', () => {
    const text = JSON.stringify({
      choices: [{ message: { content: 'the "usage": {"prompt_tokens": 999} is not real } {' } }],
      usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
    });
    expect(usageFromOpenAIText(text)).toMatchObject({ inputTokens: 5, outputTokens: 7, totalTokens: 12 });
  });

  it('returns undefined when there is no usage object', () => {
    expect(usageFromOpenAIText('{"choices":[],"usage":null}')).toBeUndefined();
    expect(usageFromOpenAIText('{"choices":[]}')).toBeUndefined();
    expect(usageFromOpenAIText('{"usage":{"prompt_tokens":1')).toBeUndefined();
    expect(usageFromOpenAIText('')).toBeUndefined();
  });

  it('tolerates whitespace around the colon', () => {
    expect(usageFromOpenAIText('{"usage" :\n {"prompt_tokens": 1, "completion_tokens": 2}}')).toMatchObject({
      inputTokens: 1,
      outputTokens: 2,
      totalTokens: 3,
    });
  });
});
