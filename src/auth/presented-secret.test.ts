import { describe, expect, it } from 'vitest';
import { maxPresentedSecretLength, presentedSecret } from './presented-secret.ts';

const secret = (headers: Record<string, string>) => presentedSecret(new Headers(headers));

describe('presentedSecret', () => {
  it('reads a Bearer token, whatever the case of the scheme and the spaces around it', () => {
    expect(secret({ authorization: 'Bearer sk-abc' })).toBe('sk-abc');
    expect(secret({ authorization: 'bearer   sk-abc  ' })).toBe('sk-abc');
    expect(secret({ Authorization: 'BEARER sk-abc' })).toBe('sk-abc');
    expect(secret({ authorization: 'bEaReR sk-abc' })).toBe('sk-abc');
  });

  it('accepts tabs and runs of spaces or tabs around and after the scheme', () => {
    expect(secret({ authorization: '\tBearer\tsk-abc\t' })).toBe('sk-abc');
    expect(secret({ authorization: '  Bearer \t \t sk-abc \t ' })).toBe('sk-abc');
  });

  it('keeps what follows the first run of whitespace after the scheme, inner spaces included', () => {
    expect(secret({ authorization: 'Bearer sk-a b' })).toBe('sk-a b');
  });

  it('reads x-api-key, trimmed', () => {
    expect(secret({ 'x-api-key': ' sk-ant ' })).toBe('sk-ant');
    expect(secret({ 'x-api-key': '\tsk-ant\t' })).toBe('sk-ant');
  });

  it('prefers Authorization over x-api-key', () => {
    expect(secret({ authorization: 'Bearer from-bearer', 'x-api-key': 'from-x-api-key' })).toBe('from-bearer');
  });

  it('takes an Authorization value without the Bearer scheme as the key itself', () => {
    expect(secret({ authorization: 'sk-raw' })).toBe('sk-raw');
    expect(secret({ authorization: '  sk-raw ' })).toBe('sk-raw');
    // A key that merely starts with the letters of the scheme is not a scheme.
    expect(secret({ authorization: 'Bearersk-raw' })).toBe('Bearersk-raw');
  });

  it('reads an empty key (refused as "no key") from an empty header or a scheme without a token', () => {
    expect(secret({ authorization: '' })).toBe('');
    expect(secret({ authorization: 'Bearer' })).toBe('');
    expect(secret({ authorization: 'bearer \t  ' })).toBe('');
    expect(secret({ 'x-api-key': '' })).toBe('');
    expect(secret({ 'x-api-key': '   ' })).toBe('');
  });

  it('returns undefined when neither header is sent', () => {
    expect(secret({})).toBeUndefined();
    expect(secret({ 'x-other': 'Bearer sk' })).toBeUndefined();
  });

  it('reads headers far longer than any key in linear time (the old pattern backtracked for seconds)', () => {
    const spaces = ' '.repeat(16_000);
    const tabs = '\t'.repeat(16_000);
    const pathological = [
      `Bearer a${spaces}b`,
      `Bearer a${tabs}b`,
      `Bearer${spaces}a${spaces}b${spaces}c`,
      `Bearer a${' \t'.repeat(8_000)}b`,
      `${spaces}Bearer${spaces}`,
      `Bearer ${'a '.repeat(8_000)}`,
      'Bearer '.repeat(2_300),
    ];
    // Each of these took up to a second of CPU with /^\s*Bearer\s+(.+?)\s*$/i; 20 rounds of all of them are a few
    // milliseconds of linear scanning. The limit is generous for a busy machine and still far below the old cost.
    const started = performance.now();
    for (let round = 0; round < 20; round++) {
      for (const value of pathological) {
        expect(secret({ authorization: value })?.length).toBeLessThanOrEqual(value.length);
        expect(secret({ 'x-api-key': value })?.length).toBeLessThanOrEqual(value.length);
      }
    }
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(secret({ authorization: `Bearer a${spaces}b` })).toBe(`a${spaces}b`);
    expect(secret({ authorization: `${spaces}Bearer${spaces}` })).toBe('');
  });

  it('states the longest secret any authenticator accepts', () => {
    expect(maxPresentedSecretLength).toBe(1024);
  });
});
