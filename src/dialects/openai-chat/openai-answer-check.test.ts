import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../tests/support/seeded-random.ts';
import { checkOpenAIAnswer } from './openai-answer-check.ts';
import { usageFromOpenAIWire } from './openai-usage-from-wire.ts';

const fixtures = new URL('../../../providers/openai-compatible/__fixtures__/', import.meta.url);
const fixture = (name: string): string => readFileSync(new URL(name, fixtures), 'utf8');

describe('checkOpenAIAnswer', () => {
  it.each(['text.json', 'tools.json', 'reasoning.json', 'embeddings.json'])(
    'accepts %s and reads the same usage as a full parse',
    (name) => {
      const text = fixture(name);
      const full = usageFromOpenAIWire((JSON.parse(text) as { usage: unknown }).usage);
      expect(full).toBeDefined();
      expect(checkOpenAIAnswer(text)).toEqual({ ok: true, usage: full });
    },
  );

  it('skips "usage" and "error" inside message content and strings with braces and escapes', () => {
    const text = JSON.stringify({
      choices: [{ message: { content: 'the "usage": {"prompt_tokens": 999} and {"error": 1} are not real } {\\' } }],
      usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
    });
    expect(checkOpenAIAnswer(text)).toMatchObject({ ok: true, usage: { inputTokens: 5, outputTokens: 7 } });
  });

  it('tolerates whitespace and an answer without usage', () => {
    expect(checkOpenAIAnswer('\n { "usage" :\n {"prompt_tokens": 1, "completion_tokens": 2}} \n')).toMatchObject({
      ok: true,
      usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
    });
    expect(checkOpenAIAnswer('{"choices":[],"usage":null}')).toEqual({ ok: true, usage: undefined });
    expect(checkOpenAIAnswer('{"choices":[],"error":null}')).toEqual({ ok: true, usage: undefined });
  });

  it('refuses what upstreams send with a 200 that is not an answer', () => {
    const text = fixture('text.json');
    const cases: [string, RegExp][] = [
      ['', /empty/],
      ['<!doctype html><html><body>502 Bad Gateway</body></html>', /not a JSON object/],
      [text.slice(0, text.length >> 1), /cut off/],
      [text.slice(0, text.lastIndexOf('}')), /cut off/],
      [`${text.trim()} trailing`, /cut off|malformed/],
      [`${text.trim()}}`, /malformed/],
      [gzipSync(text).toString('latin1'), /not a JSON object/],
      ['[1,2]', /not a JSON object/],
      ['{"a":"unterminated}', /malformed/],
    ];
    for (const [body, reason] of cases)
      expect(checkOpenAIAnswer(body), body.slice(0, 40)).toMatchObject({
        ok: false,
        reason: expect.stringMatching(reason),
      });
  });

  it('refuses error objects and keeps their message', () => {
    expect(checkOpenAIAnswer('{"error":{"message":"The server had an error","type":"server_error"}}')).toEqual({
      ok: false,
      reason: 'the body is an error object',
      errorMessage: 'The server had an error',
    });
    expect(checkOpenAIAnswer('{"id":"x","error":"quota exceeded"}')).toMatchObject({
      ok: false,
      errorMessage: 'quota exceeded',
    });
    expect(checkOpenAIAnswer('{"object":"error","message":"bad","type":"BadRequestError","code":400}')).toMatchObject({
      ok: false,
      reason: 'the body is an error object',
    });
  });

  it('refuses every prefix of an answer; only the whole one is accepted', () => {
    const text = fixture('tools.json').trim();
    for (let end = 0; end < text.length; end++) expect(checkOpenAIAnswer(text.slice(0, end)).ok).toBe(false);
    expect(checkOpenAIAnswer(text).ok).toBe(true);
  });

  it('accepts exactly what JSON.parse accepts, for randomly corrupted answers', () => {
    const random = seededRandom(8);
    const text = fixture('reasoning.json').trim();
    for (let round = 0; round < 2_000; round++) {
      const at = Math.floor(random() * text.length);
      const corrupted = text.slice(0, at) + text.slice(at + 1);
      let parses = true;
      try {
        JSON.parse(corrupted);
      } catch {
        parses = false;
      }
      expect(checkOpenAIAnswer(corrupted).ok, corrupted).toBe(parses);
    }
  });

  describe('an answer too large to parse (over 256 KiB)', () => {
    const vectors = Array.from({ length: 40 }, (_, index) => ({
      object: 'embedding',
      index,
      embedding: Array.from({ length: 1536 }, (_, dimension) => ((dimension * 7919 + index) % 1000) / 10_000),
    }));
    const large = JSON.stringify({
      object: 'list',
      data: vectors,
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 800, total_tokens: 800 },
    });

    it('is accepted with its usage read from the text', () => {
      expect(large.length).toBeGreaterThan(256 * 1024);
      expect(checkOpenAIAnswer(large)).toMatchObject({ ok: true, usage: { inputTokens: 800, totalTokens: 800 } });
    });

    it('is refused when cut off, not an object, or an error object', () => {
      expect(checkOpenAIAnswer(large.slice(0, large.length >> 1))).toMatchObject({
        ok: false,
        reason: 'the JSON is cut off',
      });
      expect(checkOpenAIAnswer(`<html>${large}</html>`)).toMatchObject({ ok: false });
      const error = JSON.stringify({ error: { message: 'overloaded', padding: 'x'.repeat(300_000) } });
      expect(checkOpenAIAnswer(error)).toMatchObject({ ok: false, errorMessage: 'overloaded' });
    });
  });
});
