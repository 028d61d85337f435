import { describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/errors.ts';
import { mapOpenAICompatibleError, mapOpenAICompatibleInBandError } from './openai-compatible-error.ts';

const noHeaders = new Headers();

function openAIError(
  message: string,
  code: string | null = null,
  type = 'invalid_request_error',
  param: string | null = null,
) {
  return { error: { message, type, param, code } };
}

describe('mapOpenAICompatibleError', () => {
  it.each([
    [400, 400, 'invalid_request_error', false],
    [404, 404, 'not_found_error', false],
    [408, 504, 'timeout_error', true],
    [409, 409, 'invalid_request_error', false],
    [413, 413, 'invalid_request_error', false],
    [422, 422, 'invalid_request_error', false],
    [429, 429, 'rate_limit_error', true],
    [402, 429, 'insufficient_quota', true],
    [500, 502, 'upstream_error', true],
    [502, 502, 'upstream_error', true],
    [503, 503, 'upstream_error', true],
    [504, 504, 'timeout_error', true],
    [529, 503, 'upstream_error', true],
    [418, 502, 'upstream_error', false],
  ] as const)('maps upstream %i to %i %s (retryable %s)', (upstreamStatus, status, type, retryable) => {
    const error = mapOpenAICompatibleError(upstreamStatus, openAIError('upstream says no', 'some_code'), noHeaders);
    expect(isGatewayError(error)).toBe(true);
    expect(error).toMatchObject({
      status,
      type,
      retryable,
      provider: 'openai-compatible',
      message: 'upstream says no',
      code: 'some_code',
    });
  });

  it('keeps the upstream message, param, code and body', () => {
    const body = openAIError('Invalid value for temperature', 'invalid_value', 'invalid_request_error', 'temperature');
    const error = mapOpenAICompatibleError(400, body, noHeaders);
    expect(error).toMatchObject({
      message: 'Invalid value for temperature',
      param: 'temperature',
      code: 'invalid_value',
      upstreamBody: body,
    });
  });

  it.each([401, 403])("turns upstream %i into a 502 about the gateway's credentials, hiding key material", (status) => {
    const body = openAIError(
      'Incorrect API key provided: sk-proj-****************Xk4Q. You can find your API key at https://platform.openai.com.',
      'invalid_api_key',
    );
    const error = mapOpenAICompatibleError(status, body, noHeaders);
    expect(error).toMatchObject({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_authentication_failed',
      retryable: true,
      upstreamBody: body,
    });
    expect(error.message).toContain(`HTTP ${status}`);
    expect(error.message).toContain('not your API key');
    expect(error.message).toContain('Incorrect API key provided: [redacted] You can find your API key');
    expect(error.message).not.toContain('Xk4Q');
    expect(
      mapOpenAICompatibleError(status, { error: 'bad key gsk-abcdefghijklmnop' }, noHeaders).message,
    ).not.toContain('gsk-abcdefghijklmnop');
  });

  it('reports an exhausted quota as insufficient_quota, by code or by type', () => {
    expect(
      mapOpenAICompatibleError(
        429,
        openAIError('You exceeded your current quota', 'insufficient_quota', 'insufficient_quota'),
        noHeaders,
      ),
    ).toMatchObject({
      status: 429,
      type: 'insufficient_quota',
      code: 'insufficient_quota',
    });
    expect(mapOpenAICompatibleError(429, openAIError('quota', null, 'insufficient_quota'), noHeaders).type).toBe(
      'insufficient_quota',
    );
  });

  it('passes retry-after headers through and nothing else', () => {
    const headers = new Headers({
      'retry-after': '2',
      'retry-after-ms': '1500',
      'x-ratelimit-remaining-requests': '0',
    });
    expect(mapOpenAICompatibleError(429, openAIError('slow down', 'rate_limit_exceeded'), headers).headers).toEqual({
      'retry-after': '2',
      'retry-after-ms': '1500',
    });
    expect(mapOpenAICompatibleError(429, openAIError('slow down'), noHeaders).headers).toBeUndefined();
  });

  it.each([
    ['a string error', { error: 'Model is loading' }, 'Model is loading', null],
    [
      'an older vLLM top-level error',
      { object: 'error', message: 'max_tokens is too large', type: 'BadRequestError', param: null, code: 400 },
      'max_tokens is too large',
      '400',
    ],
    ['a FastAPI detail string', { detail: 'Not authenticated' }, 'Not authenticated', null],
    [
      'a FastAPI validation detail',
      { detail: [{ loc: ['body', 'messages'], msg: 'field required' }] },
      'field required',
      null,
    ],
    ['a text body', '  <html>Bad Gateway</html>\n', '<html>Bad Gateway</html>', null],
  ])('reads %s', (_name, body, message, code) => {
    expect(mapOpenAICompatibleError(400, body, noHeaders)).toMatchObject({ message, code });
  });

  it.each([
    ['an empty text body', ''],
    ['a null body', null],
    ['an array', [1, 2]],
    ['an error object without message', { error: { code: 'x' } }],
    ['a message of the wrong type', { message: 42 }],
  ])('falls back to a generic message for %s', (_name, body) => {
    expect(mapOpenAICompatibleError(500, body, noHeaders).message).toBe(
      'Upstream openai-compatible returned HTTP 500.',
    );
  });
});

describe('mapOpenAICompatibleInBandError', () => {
  it('uses a numeric code in the HTTP range as the status', () => {
    expect(mapOpenAICompatibleInBandError({ error: { message: 'too long', code: 400 } })).toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      message: 'too long',
    });
    expect(mapOpenAICompatibleInBandError({ error: { message: 'busy', code: 429 } })).toMatchObject({
      status: 429,
      retryable: true,
    });
  });

  it('treats an error without a status as an upstream server error', () => {
    expect(
      mapOpenAICompatibleInBandError({
        error: { message: 'The server had an error', type: 'server_error', code: null },
      }),
    ).toMatchObject({
      status: 502,
      type: 'upstream_error',
      retryable: true,
      message: 'The server had an error',
    });
  });
});
