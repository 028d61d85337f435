import { describe, expect, it } from 'vitest';
import { mapBedrockError } from './bedrock-error.ts';

const typed = (type: string) =>
  new Headers({ 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` });

describe('mapBedrockError', () => {
  it('reads the error type from x-amzn-errortype, so a quota 400 is a retryable 429', () => {
    const error = mapBedrockError(
      400,
      { message: 'Your request exceeds the service quota.' },
      typed('ServiceQuotaExceededException'),
    );
    expect(error).toMatchObject({ status: 429, type: 'rate_limit_error', retryable: true, upstreamStatus: 400 });
    expect(error.upstreamBody).toEqual({
      message: 'Your request exceeds the service quota.',
      __type: 'ServiceQuotaExceededException',
    });
  });

  it('keeps a validation message, and reads Message with a capital M', () => {
    expect(
      mapBedrockError(400, { message: 'Input is too long for requested model.' }, typed('ValidationException')),
    ).toMatchObject({
      status: 400,
      message: 'Input is too long for requested model.',
    });
    expect(mapBedrockError(500, { Message: 'Internal failure.' }, new Headers()).message).toBe('Internal failure.');
  });

  it('passes retry-after on a throttle, and reads a text body', () => {
    const headers = typed('ThrottlingException');
    headers.set('retry-after', '3');
    expect(mapBedrockError(429, { message: 'Too many requests' }, headers).headers).toEqual({ 'retry-after': '3' });
    expect(mapBedrockError(502, 'Bad Gateway', new Headers())).toMatchObject({ status: 502, message: 'Bad Gateway' });
  });
});
