import { describe, expect, it } from 'vitest';
import { mapCohereError } from './cohere-error.ts';

describe('mapCohereError', () => {
  it('keeps the message and passes retry-after on a rate limit', () => {
    const error = mapCohereError(
      429,
      { id: 'x', message: 'trial token rate limit exceeded, limit is 100000 tokens per minute' },
      new Headers({ 'retry-after': '12' }),
    );
    expect(error).toMatchObject({
      status: 429,
      type: 'rate_limit_error',
      retryable: true,
      provider: 'cohere',
      message: 'trial token rate limit exceeded, limit is 100000 tokens per minute',
      headers: { 'retry-after': '12' },
    });
  });

  it('blames the gateway configuration for a rejected key', () => {
    const error = mapCohereError(401, { message: 'invalid api token' }, new Headers());
    expect(error).toMatchObject({ status: 502, code: 'upstream_authentication_failed', retryable: true });
    expect(error.message).toContain("Cohere rejected the gateway's credentials");
    expect(error.message).toContain('invalid api token');
  });

  it('answers a deny-listed token (498) as a content filter, and a cancelled request (499) as retryable', () => {
    expect(mapCohereError(498, { message: 'blocked input' }, new Headers())).toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      code: 'content_filter',
      retryable: false,
    });
    expect(mapCohereError(499, { message: 'request cancelled' }, new Headers())).toMatchObject({
      status: 502,
      code: 'upstream_request_cancelled',
      retryable: true,
    });
  });

  it('reads text bodies and bodies without a message', () => {
    expect(mapCohereError(502, '<html>Bad Gateway</html>', new Headers()).message).toBe('<html>Bad Gateway</html>');
    expect(mapCohereError(504, {}, new Headers())).toMatchObject({ status: 504, message: 'Cohere returned HTTP 504.' });
  });
});
