import { describe, expect, it } from 'vitest';
import { presentedSecret } from './presented-secret.ts';

const secret = (headers: Record<string, string>) => presentedSecret(new Headers(headers));

describe('presentedSecret', () => {
  it('reads a Bearer token, whatever the case of the scheme and the spaces around it', () => {
    expect(secret({ authorization: 'Bearer sk-abc' })).toBe('sk-abc');
    expect(secret({ authorization: 'bearer   sk-abc  ' })).toBe('sk-abc');
    expect(secret({ Authorization: 'BEARER sk-abc' })).toBe('sk-abc');
  });

  it('reads x-api-key, trimmed', () => {
    expect(secret({ 'x-api-key': ' sk-ant ' })).toBe('sk-ant');
  });

  it('prefers Authorization over x-api-key', () => {
    expect(secret({ authorization: 'Bearer from-bearer', 'x-api-key': 'from-x-api-key' })).toBe('from-bearer');
  });

  it('takes an Authorization value without the Bearer scheme as the key itself', () => {
    expect(secret({ authorization: 'sk-raw' })).toBe('sk-raw');
  });

  it('returns undefined when neither header is sent', () => {
    expect(secret({})).toBeUndefined();
    expect(secret({ 'x-other': 'Bearer sk' })).toBeUndefined();
  });
});
