import { encode as encodeCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { encode as encodeO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { createGptTokenizerTokenCounter, type GptTokenizerEncodingModule } from './gpt-tokenizer-token-counter.ts';

const text = 'Hello, wörld! 東京 is <|endoftext|> far: `const x = 42;`\n\tindented';

describe('createGptTokenizerTokenCounter', () => {
  it("counts with gpt-tokenizer's o200k_base and cl100k_base, special-token spellings as ordinary text", async () => {
    const counter = createGptTokenizerTokenCounter();
    const o200k = await counter.tokenizerFor('gpt-4o-mini');
    const cl100k = await counter.tokenizerFor('gpt-4-turbo');
    expect(o200k?.encoding).toBe('o200k_base');
    expect(cl100k?.encoding).toBe('cl100k_base');
    expect(o200k?.countTokens(text)).toBe(encodeO200k(text, { disallowedSpecial: new Set() }).length);
    expect(cl100k?.countTokens(text)).toBe(encodeCl100k(text, { disallowedSpecial: new Set() }).length);
    // `<|endoftext|>` as one special token would make the text shorter, not longer.
    expect(o200k?.countTokens('<|endoftext|>')).toBeGreaterThan(1);
    expect(o200k?.countTokens('')).toBe(0);
  });

  it('loads nothing at creation nor for other families, and each encoding once, on first use', async () => {
    const imported: string[] = [];
    const counter = createGptTokenizerTokenCounter({
      importEncoding: async (encoding): Promise<GptTokenizerEncodingModule> => {
        imported.push(encoding);
        return { countTokens: (input) => (typeof input === 'string' ? input.length : 0) };
      },
    });
    expect(imported).toEqual([]);
    expect(await counter.tokenizerFor('llama-3.3-70b-versatile')).toBeUndefined();
    expect(await counter.tokenizerFor('mistral-large-latest')).toBeUndefined();
    expect(imported).toEqual([]);
    const [first, second] = await Promise.all([counter.tokenizerFor('gpt-5'), counter.tokenizerFor('o3-mini')]);
    expect(first).toBe(second);
    await counter.tokenizerFor('gpt-4.1');
    await counter.tokenizerFor('gpt-3.5-turbo');
    expect(imported).toEqual(['o200k_base', 'cl100k_base']);
  });

  it('keeps a failed import failed rather than retrying it on every request', async () => {
    let imports = 0;
    const counter = createGptTokenizerTokenCounter({
      importEncoding: async () => {
        imports++;
        throw new Error("Cannot find package 'gpt-tokenizer'");
      },
    });
    await expect(counter.tokenizerFor('gpt-4o')).rejects.toThrow('gpt-tokenizer');
    await expect(counter.tokenizerFor('gpt-4o')).rejects.toThrow('gpt-tokenizer');
    expect(imports).toBe(1);
  });
});
