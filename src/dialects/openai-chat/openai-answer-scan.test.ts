import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../tests/support/seeded-random.ts';
import { scanOpenAIAnswer } from './openai-answer-scan.ts';
import { usageFromOpenAIWire } from './openai-usage-from-wire.ts';

const fixtures = new URL('../../../providers/openai-compatible/__fixtures__/', import.meta.url);
const fixture = (name: string): string => readFileSync(new URL(name, fixtures), 'utf8');

describe('scanOpenAIAnswer', () => {
  it.each(['text.json', 'tools.json', 'reasoning.json', 'embeddings.json'])(
    'accepts %s and reads the same usage as a full parse',
    (name) => {
      const text = fixture(name);
      const full = usageFromOpenAIWire((JSON.parse(text) as { usage: unknown }).usage);
      expect(full).toBeDefined();
      expect(scanOpenAIAnswer(text)).toEqual({ ok: true, usage: full });
    },
  );

  it('skips "usage" and "error" inside message content and strings with braces and escapes', () => {
    const text = JSON.stringify({
      choices: [{ message: { content: 'the "usage": {"prompt_tokens": 999} and {"error": 1} are not real } {\\' } }],
      usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
    });
    expect(scanOpenAIAnswer(text)).toMatchObject({ ok: true, usage: { inputTokens: 5, outputTokens: 7 } });
  });

  it('tolerates whitespace and an answer without usage', () => {
    expect(scanOpenAIAnswer('\n { "usage" :\n {"prompt_tokens": 1, "completion_tokens": 2}} \n')).toMatchObject({
      ok: true,
      usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
    });
    expect(scanOpenAIAnswer('{"choices":[],"usage":null}')).toEqual({ ok: true, usage: undefined });
    expect(scanOpenAIAnswer('{"choices":[],"error":null}')).toEqual({ ok: true, usage: undefined });
  });

  it('refuses what upstreams send with a 200 that is not an answer', () => {
    const text = fixture('text.json');
    const cases: [string, string][] = [
      ['', 'the body is empty'],
      ['<!doctype html><html><body>502 Bad Gateway</body></html>', 'the body is not a JSON object'],
      [text.slice(0, text.length >> 1), 'the JSON is cut off'],
      [text.slice(0, text.lastIndexOf('}')), 'the JSON is cut off'],
      [`${text.trim()} trailing`, 'there is text after the JSON object'],
      [`${text.trim()}}`, 'there is text after the JSON object'],
      [gzipSync(text).toString('latin1'), 'the body is not a JSON object'],
      ['[1,2]', 'the body is not a JSON object'],
      ['{"a":"unterminated}', 'the JSON is cut off'],
    ];
    for (const [body, reason] of cases)
      expect(scanOpenAIAnswer(body), body.slice(0, 40)).toMatchObject({ ok: false, reason });
  });

  it('refuses error objects and keeps their message', () => {
    expect(scanOpenAIAnswer('{"error":{"message":"The server had an error","type":"server_error"}}')).toEqual({
      ok: false,
      reason: 'the body is an error object',
      errorMessage: 'The server had an error',
    });
    expect(scanOpenAIAnswer('{"id":"x","error":"quota exceeded"}')).toMatchObject({
      ok: false,
      errorMessage: 'quota exceeded',
    });
    expect(scanOpenAIAnswer('{"object":"error","message":"bad","type":"BadRequestError","code":400}')).toMatchObject({
      ok: false,
      reason: 'the body is an error object',
    });
  });

  it('agrees with JSON.parse on every prefix of an answer (only the whole one is accepted)', () => {
    const text = fixture('tools.json').trim();
    for (let end = 0; end < text.length; end++) expect(scanOpenAIAnswer(text.slice(0, end)).ok).toBe(false);
    expect(scanOpenAIAnswer(text).ok).toBe(true);
  });

  it('never accepts a randomly corrupted answer whose brackets no longer balance', () => {
    const random = seededRandom(8);
    const text = fixture('reasoning.json').trim();
    for (let round = 0; round < 2_000; round++) {
      const at = Math.floor(random() * text.length);
      const corrupted = text.slice(0, at) + text.slice(at + 1);
      const scan = scanOpenAIAnswer(corrupted);
      let parses = true;
      try {
        JSON.parse(corrupted);
      } catch {
        parses = false;
      }
      // Dropping one character of valid JSON: whatever the scan accepts must still be structurally whole.
      if (parses) expect(scan.ok).toBe(true);
      if (scan.ok && !parses) expect(corrupted.split('{').length).toBe(corrupted.split('}').length);
    }
  });
});
