import { describe, expect, it } from 'vitest';
import { isGatewayError, type GatewayError } from '../errors.ts';
import { createMasterKeyAuthenticator, invalidKeyError, isMasterKey } from './master-key-authenticator.ts';
import { maxPresentedSecretLength, presentedSecret } from './presented-secret.ts';

const masterKey = 'sk-torii-master-0123456789';

async function rejectionOf(attempt: () => unknown): Promise<GatewayError> {
  try {
    await attempt();
  } catch (error) {
    if (isGatewayError(error)) return error;
    throw error;
  }
  throw new Error('expected authentication to fail');
}

const rejection = (secret: string | undefined) =>
  rejectionOf(() => createMasterKeyAuthenticator(masterKey).authenticate(secret));

describe('createMasterKeyAuthenticator', () => {
  it.each([
    ['Authorization: Bearer', { authorization: `Bearer ${masterKey}` }],
    ['x-api-key', { 'x-api-key': masterKey }],
  ])('lets the master key in through %s', async (_header, headers) => {
    const secret = presentedSecret(new Headers(headers));
    expect(await createMasterKeyAuthenticator(masterKey).authenticate(secret)).toEqual({
      subject: 'master',
      kind: 'master',
      allowedModelGroups: 'all',
    });
  });

  it.each([
    ['a wrong key', 'sk-torii-master-0123456788'],
    ['a prefix of the key', masterKey.slice(0, -1)],
    ['the key with a suffix', `${masterKey}x`],
  ])('answers 401 invalid_api_key for %s', async (_case, secret) => {
    const error = await rejection(secret);
    expect(error.status).toBe(401);
    expect(error.type).toBe('invalid_request_error');
    expect(error.code).toBe('invalid_api_key');
    expect(error.message).toBe('Incorrect API key provided.');
    expect(error.message).not.toContain(secret);
  });

  it.each([
    ['no key', undefined],
    ['an empty key', ''],
  ])('answers 401 invalid_api_key for %s, saying how to send one', async (_case, secret) => {
    const error = await rejection(secret);
    expect(error.status).toBe(401);
    expect(error.code).toBe('invalid_api_key');
    expect(error.message).toContain("'Authorization: Bearer <key>'");
  });

  it('answers 401 when the request carries no key header at all', async () => {
    const error = await rejection(presentedSecret(new Headers({ 'content-type': 'application/json' })));
    expect(error).toEqual(invalidKeyError(undefined));
  });

  it('refuses a secret longer than the limit with the usual 401', async () => {
    const authenticator = createMasterKeyAuthenticator(masterKey);
    for (const length of [maxPresentedSecretLength + 1, 16_000, 1_000_000]) {
      const error = await rejectionOf(() => authenticator.authenticate('k'.repeat(length)));
      expect(error).toEqual(invalidKeyError('k'));
    }
    // At the limit the secret is checked as usual.
    expect((await rejectionOf(() => authenticator.authenticate('k'.repeat(maxPresentedSecretLength)))).status).toBe(
      401,
    );
    const shorter = createMasterKeyAuthenticator(masterKey, { maxSecretLength: 40 });
    expect((await rejectionOf(() => shorter.authenticate('k'.repeat(41)))).code).toBe('invalid_api_key');
  });

  it('rejects a master key longer than the secret limit at creation (it could never be presented)', () => {
    expect(() => createMasterKeyAuthenticator('m'.repeat(maxPresentedSecretLength + 1))).toThrow(
      `The master key must be at most ${maxPresentedSecretLength} characters long.`,
    );
    expect(() => createMasterKeyAuthenticator('m'.repeat(maxPresentedSecretLength))).not.toThrow();
  });

  it('rejects a master key shorter than 8 characters at creation', () => {
    expect(() => createMasterKeyAuthenticator('short')).toThrow('The master key must be at least 8 characters long.');
    expect(() => createMasterKeyAuthenticator('')).toThrow();
    expect(() => createMasterKeyAuthenticator('12345678')).not.toThrow();
  });
});

describe('isMasterKey', () => {
  it('is true for the master key only', () => {
    expect(isMasterKey('sk-master-123', 'sk-master-123')).toBe(true);
    expect(isMasterKey('sk-master-124', 'sk-master-123')).toBe(false);
    expect(isMasterKey('tk-master-123', 'sk-master-123')).toBe(false);
    expect(isMasterKey('', 'sk-master-123')).toBe(false);
  });

  it('is false for a prefix or an extension of the master key', () => {
    expect(isMasterKey('sk-master-12', 'sk-master-123')).toBe(false);
    expect(isMasterKey('sk-master-1234', 'sk-master-123')).toBe(false);
    expect(isMasterKey('sk-master-123\u0000', 'sk-master-123')).toBe(false);
  });

  it('compares UTF-16 code units, so keys with characters beyond ASCII match only themselves', () => {
    expect(isMasterKey('ключ-мастер-🔑', 'ключ-мастер-🔑')).toBe(true);
    expect(isMasterKey('ключ-мастер-🔐', 'ключ-мастер-🔑')).toBe(false);
  });
});
