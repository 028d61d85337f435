import { describe, expect, it } from 'vitest';
import { isGatewayError, renderError } from '../../src/errors.ts';
import { mapAnthropicError } from './anthropic-error.ts';

const anthropicBody = (type: string, message: string) => ({
  type: 'error',
  error: { type, message },
  request_id: 'req_01',
});

describe('mapAnthropicError', () => {
  it.each([
    [400, 'invalid_request_error', 400, 'invalid_request_error', null, false],
    [401, 'authentication_error', 502, 'upstream_error', 'upstream_authentication_failed', true],
    [402, 'billing_error', 502, 'upstream_error', 'upstream_billing_error', true],
    [403, 'permission_error', 502, 'upstream_error', 'upstream_authentication_failed', true],
    [404, 'not_found_error', 502, 'upstream_error', 'upstream_model_not_found', true],
    [413, 'request_too_large', 413, 'invalid_request_error', 'request_too_large', false],
    [429, 'rate_limit_error', 429, 'rate_limit_error', 'rate_limit_exceeded', true],
    [500, 'api_error', 502, 'upstream_error', 'upstream_server_error', true],
    [504, 'timeout_error', 504, 'timeout_error', 'upstream_timeout', true],
    [529, 'overloaded_error', 503, 'upstream_error', 'upstream_overloaded', true],
  ] as const)('maps HTTP %i (%s)', (upstreamStatus, anthropicType, status, type, code, retryable) => {
    const body = anthropicBody(anthropicType, `upstream says ${upstreamStatus}`);
    const error = mapAnthropicError(upstreamStatus, body, new Headers());
    expect(isGatewayError(error)).toBe(true);
    expect(error).toMatchObject({ status, type, code, retryable, provider: 'anthropic', upstreamBody: body });
    expect(error.message).toContain(`upstream says ${upstreamStatus}`);
  });

  it('passes retry-after through on retryable errors only', () => {
    const headers = new Headers({ 'retry-after': '17', 'anthropic-ratelimit-requests-remaining': '0' });
    expect(mapAnthropicError(429, anthropicBody('rate_limit_error', 'slow down'), headers).headers).toEqual({
      'retry-after': '17',
    });
    expect(mapAnthropicError(529, anthropicBody('overloaded_error', 'Overloaded'), headers).headers).toEqual({
      'retry-after': '17',
    });
    expect(mapAnthropicError(400, anthropicBody('invalid_request_error', 'bad'), headers).headers).toBeUndefined();
    expect(
      mapAnthropicError(429, anthropicBody('rate_limit_error', 'slow down'), new Headers()).headers,
    ).toBeUndefined();
  });

  it('keeps a non-JSON body as the message, and names the status when there is nothing to keep', () => {
    const html = mapAnthropicError(502, '  <html>Bad Gateway</html>\n', new Headers());
    expect(html).toMatchObject({
      status: 502,
      type: 'upstream_error',
      retryable: true,
      message: '<html>Bad Gateway</html>',
    });
    expect(mapAnthropicError(500, '', new Headers()).message).toBe('Anthropic returned HTTP 500.');
    expect(mapAnthropicError(500, { unexpected: true }, new Headers()).message).toBe('Anthropic returned HTTP 500.');
  });

  it('answers statuses it does not know with a 502, retryable only for 5xx', () => {
    expect(mapAnthropicError(418, 'teapot', new Headers())).toMatchObject({
      status: 502,
      code: 'upstream_error',
      retryable: false,
    });
    expect(mapAnthropicError(503, 'unavailable', new Headers())).toMatchObject({
      status: 503,
      code: 'upstream_unavailable',
      retryable: true,
    });
  });

  it('renders as an OpenAI error the SDK understands, with retry-after', async () => {
    const response = renderError(
      mapAnthropicError(429, anthropicBody('rate_limit_error', 'slow down'), new Headers({ 'retry-after': '3' })),
      'openai',
    );
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(await response.json()).toEqual({
      error: { message: 'slow down', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' },
    });
  });
});
