import { describe, expect, it } from 'vitest';
import { isGatewayError, type GatewayError } from '../errors.ts';
import { decodeJsonEvent } from './decode-json-events.ts';

function thrown(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (isGatewayError(error)) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

describe('decodeJsonEvent', () => {
  it('turns the [DONE] sentinel into undefined', () => {
    expect(decodeJsonEvent({ event: undefined, data: '[DONE]', id: undefined }, 'openai')).toBeUndefined();
  });

  it('parses the data as JSON and keeps the event name as type', () => {
    expect(decodeJsonEvent({ event: 'message_stop', data: '{"type":"message_stop"}', id: '3' }, 'anthropic')).toEqual({
      type: 'message_stop',
      data: { type: 'message_stop' },
    });
    expect(decodeJsonEvent({ event: undefined, data: '[1, null]', id: undefined }, 'openai')).toEqual({
      type: undefined,
      data: [1, null],
    });
  });

  it('rejects non-JSON data with a 502 upstream_invalid_stream naming the provider', () => {
    const error = thrown(() => decodeJsonEvent({ event: undefined, data: '{"choices":[', id: undefined }, 'groq'));
    expect(error.status).toBe(502);
    expect(error.type).toBe('upstream_error');
    expect(error.code).toBe('upstream_invalid_stream');
    expect(error.provider).toBe('groq');
    expect(error.message).toMatch(/^Upstream groq sent a stream event that is not JSON: /);
  });

  it('does not treat a [DONE] with surrounding text as the sentinel', () => {
    expect(thrown(() => decodeJsonEvent({ event: undefined, data: ' [DONE]', id: undefined }, 'openai')).code).toBe(
      'upstream_invalid_stream',
    );
  });
});

describe('decodeJsonEvent limits', () => {
  it('refuses an event nested deeper than the depth limit with a 502, and leaves short events unscanned', () => {
    const deep = `${'['.repeat(200)}${']'.repeat(200)}`;
    const error = thrown(() => decodeJsonEvent({ event: undefined, data: deep, id: undefined }, 'anthropic'));
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_invalid_stream');
    expect(error.message).toMatch(/nests deeper than 128 levels/);
    const atLimit = `${'['.repeat(128)}${']'.repeat(128)}`;
    expect(decodeJsonEvent({ event: undefined, data: atLimit, id: undefined }, 'anthropic')?.data).toBeDefined();
  });

  it('applies the limits it is given', () => {
    const data = '{"a":[[[1]]]}';
    const limits = { maxDepth: 3, maxElements: 10 };
    expect(thrown(() => decodeJsonEvent({ event: undefined, data, id: undefined }, 'x', limits)).code).toBe(
      'upstream_invalid_stream',
    );
  });
});
