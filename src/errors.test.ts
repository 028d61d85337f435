import { describe, expect, it } from 'vitest';
import {
  anthropicErrorBody,
  GatewayError,
  invalidRequest,
  isGatewayError,
  openAIErrorBody,
  renderError,
  toGatewayError,
} from './errors.ts';

const rateLimited = new GatewayError({
  status: 429,
  type: 'rate_limit_error',
  code: 'rate_limit_exceeded',
  message: 'Slow down.',
  provider: 'openai',
  retryable: true,
  upstreamBody: { error: { message: 'Slow down.' } },
  headers: { 'retry-after': '7' },
});

describe('GatewayError', () => {
  it('defaults code and param to null and retryable to false', () => {
    const error = new GatewayError({ status: 400, type: 'invalid_request_error', message: 'Bad.' });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('GatewayError');
    expect(error.code).toBeNull();
    expect(error.param).toBeNull();
    expect(error.retryable).toBe(false);
    expect(error.provider).toBeUndefined();
    expect(error.headers).toBeUndefined();
    expect('cause' in error).toBe(false);
  });

  it('builds a 400 naming the field with invalidRequest', () => {
    const error = invalidRequest("Invalid value for 'n'.", 'n', 'invalid_value');
    expect([error.status, error.type, error.param, error.code]).toEqual([
      400,
      'invalid_request_error',
      'n',
      'invalid_value',
    ]);
  });
});

describe('renderError', () => {
  it('renders the exact OpenAI envelope', async () => {
    const response = renderError(rateLimited, 'openai');
    expect(response.status).toBe(429);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('retry-after')).toBe('7');
    const body = (await response.json()) as { error: Record<string, unknown> };
    expect(body).toEqual({
      error: { message: 'Slow down.', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' },
    });
    expect(Object.keys(body)).toEqual(['error']);
    expect(Object.keys(body.error)).toEqual(['message', 'type', 'param', 'code']);
  });

  it('renders the exact Anthropic envelope', async () => {
    const response = renderError(rateLimited, 'anthropic');
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    const body = (await response.json()) as { error: Record<string, unknown> };
    expect(body).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: 'Slow down.' } });
    expect(Object.keys(body)).toEqual(['type', 'error']);
    expect(Object.keys(body.error)).toEqual(['type', 'message']);
  });

  it('lets extra headers override the error headers', () => {
    const response = renderError(rateLimited, 'openai', { 'retry-after': '1', 'x-request-id': 'abc' });
    expect(response.headers.get('retry-after')).toBe('1');
    expect(response.headers.get('x-request-id')).toBe('abc');
  });

  it.each<[number, string]>([
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [413, 'request_too_large'],
    [422, 'invalid_request_error'],
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [502, 'api_error'],
    [504, 'timeout_error'],
    [529, 'overloaded_error'],
  ])('maps status %i to the Anthropic error type %s', (status, type) => {
    const error = new GatewayError({ status, type: 'api_error', message: 'x' });
    expect(anthropicErrorBody(error).error.type).toBe(type);
  });

  it('keeps param in the OpenAI envelope', () => {
    expect(openAIErrorBody(invalidRequest('Bad temperature.', 'temperature'))).toEqual({
      error: { message: 'Bad temperature.', type: 'invalid_request_error', param: 'temperature', code: null },
    });
  });
});

describe('isGatewayError', () => {
  it('recognises a gateway error from another copy of the class by its marker', () => {
    expect(isGatewayError({ __toriiGatewayError: true, status: 400 })).toBe(true);
    expect(isGatewayError(rateLimited)).toBe(true);
  });

  it('rejects everything else', () => {
    expect(isGatewayError(new Error('x'))).toBe(false);
    expect(isGatewayError({ __toriiGatewayError: 'true' })).toBe(false);
    expect(isGatewayError({ status: 400, type: 'invalid_request_error' })).toBe(false);
    expect(isGatewayError(null)).toBe(false);
    expect(isGatewayError(undefined)).toBe(false);
    expect(isGatewayError('GatewayError')).toBe(false);
  });
});

describe('toGatewayError', () => {
  it('returns a gateway error unchanged', () => {
    expect(toGatewayError(rateLimited)).toBe(rateLimited);
  });

  it('turns any other failure into a 500 internal_error that hides its message', async () => {
    const cause = new Error('ECONNREFUSED postgres://admin:hunter2@db:5432');
    const error = toGatewayError(cause);
    expect(error.status).toBe(500);
    expect(error.type).toBe('api_error');
    expect(error.code).toBe('internal_error');
    expect(error.message).toBe('Internal gateway error.');
    expect(error.cause).toBe(cause);
    const text = await renderError(error, 'openai').text();
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('ECONNREFUSED');
  });

  it('wraps thrown non-errors too', () => {
    expect(toGatewayError('boom').code).toBe('internal_error');
    expect(toGatewayError(undefined).status).toBe(500);
  });
});
