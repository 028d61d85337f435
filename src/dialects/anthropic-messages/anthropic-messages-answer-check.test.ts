import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkAnthropicAnswer } from './anthropic-messages-answer-check.ts';

const fixture = (name: string): string =>
  readFileSync(new URL(`../../../providers/anthropic/__fixtures__/${name}`, import.meta.url), 'utf8');

const message = {
  id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5-20250929',
  content: [{ type: 'text', text: 'Hello!' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 21, cache_creation_input_tokens: 10, cache_read_input_tokens: 1834, output_tokens: 24 },
};

describe('checkAnthropicAnswer', () => {
  it('accepts a message and reads its usage in canonical accounting', () => {
    expect(checkAnthropicAnswer(JSON.stringify(message))).toEqual({
      ok: true,
      usage: {
        inputTokens: 1865,
        outputTokens: 24,
        totalTokens: 1889,
        cachedInputTokens: 1834,
        cacheWriteInputTokens: 10,
        raw: message.usage,
      },
    });
  });

  it.each(['text.json', 'thinking.json', 'tools.json'])('accepts the recorded %s answer', (name) => {
    const check = checkAnthropicAnswer(fixture(name));
    expect(check.ok).toBe(true);
    if (check.ok) expect(check.usage?.outputTokens).toBeGreaterThan(0);
  });

  it('accepts a message without usage, with usage undefined', () => {
    const { usage: _usage, ...withoutUsage } = message;
    expect(checkAnthropicAnswer(JSON.stringify(withoutUsage))).toEqual({ ok: true, usage: undefined });
    expect(checkAnthropicAnswer(JSON.stringify({ ...message, usage: 'n/a' }))).toEqual({ ok: true, usage: undefined });
  });

  it("rejects an error object, keeping the upstream's message", () => {
    expect(checkAnthropicAnswer(fixture('error-529.json'))).toMatchObject({
      ok: false,
      reason: 'the body is an error object',
      errorMessage: expect.any(String) as unknown,
    });
    const error = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
    expect(checkAnthropicAnswer(JSON.stringify(error))).toEqual({
      ok: false,
      reason: 'the body is an error object',
      errorMessage: 'Overloaded',
    });
    expect(checkAnthropicAnswer('{"error":{"message":"Invalid key","type":"invalid_request_error"}}')).toEqual({
      ok: false,
      reason: 'the body is an error object',
      errorMessage: 'Invalid key',
    });
    expect(checkAnthropicAnswer('{"type":"error"}')).toEqual({ ok: false, reason: 'the body is an error object' });
  });

  it('rejects what is not a message, saying why', () => {
    expect(checkAnthropicAnswer('')).toEqual({ ok: false, reason: 'the body is empty' });
    expect(checkAnthropicAnswer(' \n')).toEqual({ ok: false, reason: 'the body is empty' });
    expect(checkAnthropicAnswer('<html><body>Bad gateway</body></html>')).toEqual({
      ok: false,
      reason: 'the body is not a JSON object',
    });
    expect(checkAnthropicAnswer(JSON.stringify(message).slice(0, 80))).toEqual({
      ok: false,
      reason: 'the JSON is cut off',
    });
    expect(checkAnthropicAnswer('{"type":"message",}')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^the JSON is malformed \(/) as unknown,
    });
    expect(checkAnthropicAnswer('[1]')).toEqual({ ok: false, reason: 'the body is not a JSON object' });
    expect(checkAnthropicAnswer('null')).toEqual({ ok: false, reason: 'the body is not a JSON object' });
    expect(checkAnthropicAnswer('{"object":"chat.completion","choices":[]}')).toEqual({
      ok: false,
      reason: 'the body is not an Anthropic message (type missing)',
    });
    expect(checkAnthropicAnswer('{"type":"completion"}')).toEqual({
      ok: false,
      reason: 'the body is not an Anthropic message (type "completion")',
    });
  });
});
