import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { isGatewayError, type GatewayError } from '../errors.ts';
import { validateOpenAIChatRequest } from '../dialects/openai-chat/openai-chat-dialect.ts';
import { firstValidationProblem, formatIssuePath } from './zod-issues.ts';

const user = { role: 'user', content: 'Hello' };

function rejection(body: Record<string, unknown>): GatewayError {
  try {
    validateOpenAIChatRequest(body);
  } catch (error) {
    if (isGatewayError(error)) return error;
    throw error;
  }
  throw new Error('expected the request to be rejected');
}

describe('validateOpenAIChatRequest', () => {
  it('accepts a valid request and keeps unknown fields', () => {
    const body = { model: 'gpt-4o-mini', messages: [user], temperature: 0.5, provider_extension: { a: 1 } };
    expect(validateOpenAIChatRequest(body)).toEqual(body);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a wrong content type', { model: 'm', messages: [{ role: 'user', content: 42 }] }, 'messages.[0].content'],
    ['a temperature above 2', { model: 'm', messages: [user], temperature: 7 }, 'temperature'],
    ['a missing model', { messages: [user] }, 'model'],
    ['an empty model', { model: '', messages: [user] }, 'model'],
    ['an empty messages array', { model: 'm', messages: [] }, 'messages'],
    ['messages that are not an array', { model: 'm', messages: 'hi' }, 'messages'],
    ['an unknown role', { model: 'm', messages: [user, { role: 'robot', content: 'x' }] }, 'messages.[1].role'],
    ['a missing role', { model: 'm', messages: [user, { content: 'x' }] }, 'messages.[1].role'],
    [
      'a tool name over 64 characters',
      { model: 'm', messages: [user], tools: [{ type: 'function', function: { name: 'x'.repeat(65) } }] },
      'tools.[0].function.name',
    ],
    [
      'an unknown user content part type',
      { model: 'm', messages: [{ role: 'user', content: [{ type: 'video' }] }] },
      'messages.[0].content.[0].type',
    ],
    [
      'an empty image URL',
      { model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: '' } }] }] },
      'messages.[0].content.[0].image_url.url',
    ],
    [
      'a tool message without tool_call_id',
      { model: 'm', messages: [{ role: 'tool', content: 'x' }] },
      'messages.[0].tool_call_id',
    ],
    ['max_tokens of 0', { model: 'm', messages: [user], max_tokens: 0 }, 'max_tokens'],
    [
      'a json_schema format without a name',
      { model: 'm', messages: [user], response_format: { type: 'json_schema', json_schema: {} } },
      'response_format.json_schema.name',
    ],
  ])('rejects %s with a 400 naming the field', (_case, body, param) => {
    const error = rejection(body);
    expect(error.status).toBe(400);
    expect(error.type).toBe('invalid_request_error');
    expect(error.param).toBe(param);
    expect(error.message).toMatch(new RegExp(`^Invalid value for '${param.replace(/[.[\]]/g, '\\$&')}': .+\\.$`));
  });

  it('explains the bound that was broken', () => {
    expect(rejection({ model: 'm', messages: [user], temperature: 7 }).message).toBe(
      "Invalid value for 'temperature': Too big: expected number to be <=2.",
    );
    expect(rejection({ model: 'm', messages: [user, { role: 'robot', content: 'x' }] }).message).toContain("'tool'");
  });
});

describe('formatIssuePath', () => {
  it("renders paths in OpenAI's param notation", () => {
    expect(formatIssuePath([])).toBeNull();
    expect(formatIssuePath(['model'])).toBe('model');
    expect(formatIssuePath(['messages', 0, 'content', 2, 'text'])).toBe('messages.[0].content.[2].text');
  });
});

describe('firstValidationProblem', () => {
  it('names the first unrecognized key of a strict object and lists them all', () => {
    const schema = z.strictObject({ nested: z.strictObject({ a: z.string() }) });
    const result = schema.safeParse({ nested: { a: 'x', b: 1, c: 2 } });
    expect(result.success).toBe(false);
    expect(firstValidationProblem(result.error?.issues ?? [])).toEqual({
      param: 'nested.b',
      message: 'Unrecognized field: nested.b, c.',
    });
  });

  it('reports a problem at the root without a param', () => {
    const result = z.object({}).safeParse('text');
    expect(firstValidationProblem(result.error?.issues ?? [])).toEqual({
      param: null,
      message: 'Invalid request: expected object, received string.',
    });
    expect(firstValidationProblem([])).toEqual({ param: null, message: 'Invalid request body.' });
  });

  it('descends into union branches for the deepest issue', () => {
    const schema = z.object({ content: z.union([z.string(), z.array(z.object({ text: z.string() }))]) });
    const result = schema.safeParse({ content: [{ text: 'ok' }, { text: 5 }] });
    expect(firstValidationProblem(result.error?.issues ?? []).param).toBe('content.[1].text');
  });
});
