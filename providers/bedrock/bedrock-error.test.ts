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

  it('cuts the signed request AWS echoes on a signature mismatch: its headers hold the session token', () => {
    const message =
      "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.\n\nThe Canonical String for this request should have been\n'POST\n/model/x/converse\n\nhost:bedrock-runtime.us-east-1.amazonaws.com\nx-amz-security-token:IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKEN\n'\n\nThe String-to-Sign should have been\n'AWS4-HMAC-SHA256\n'";
    const headers = new Headers({ 'x-amzn-errortype': 'InvalidSignatureException:http://internal.amazon.com/' });
    const error = mapBedrockError(403, { message }, headers);
    expect(error.message).toContain('The request signature we calculated does not match');
    expect(error.message).not.toContain('IQoJb3JpZ2lu');
    expect(JSON.stringify(error.upstreamBody)).not.toContain('IQoJb3JpZ2lu');
  });
});
