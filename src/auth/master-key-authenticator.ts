import { GatewayError } from '../errors.ts';
import type { AuthContext, Authenticator } from './authenticator.ts';
import { sha256 } from './sha256.ts';

const masterContext: AuthContext = { subject: 'master', kind: 'master', allowedModelGroups: 'all' };

/** The 401 every failed authentication answers with, shaped as OpenAI's own. */
export function invalidKeyError(secret: string | undefined): GatewayError {
  return new GatewayError({
    status: 401,
    type: 'invalid_request_error',
    code: 'invalid_api_key',
    message:
      secret === undefined
        ? "You didn't provide an API key. Send it as 'Authorization: Bearer <key>' or in the 'x-api-key' header."
        : 'Incorrect API key provided.',
  });
}

/**
 * Authenticates the master key only. The presented secret and the master key are both hashed with SHA-256 and the
 * digests compared in constant time, so neither the key's content nor its length leaks through timing.
 *
 * @example
 * const authenticator = createMasterKeyAuthenticator(environment.TORII_MASTER_KEY);
 * const caller = await authenticator.authenticate('sk-my-master-key');
 */
export function createMasterKeyAuthenticator(masterKey: string): Authenticator {
  if (masterKey.length < 8) throw new Error('The master key must be at least 8 characters long.');
  const expectedDigest = sha256(masterKey);
  return {
    async authenticate(secret) {
      if (secret === undefined || secret.length === 0) throw invalidKeyError(undefined);
      const [presented, expected] = await Promise.all([sha256(secret), expectedDigest]);
      if (!constantTimeEqual(presented, expected)) throw invalidKeyError(secret);
      return masterContext;
    },
  };
}

/** Compares two byte arrays of equal length without an early exit. */
export function constantTimeEqual(left: Uint8Array, right: Uint8Array): boolean {
  if (left.length !== right.length) return false;
  let difference = 0;
  for (let index = 0; index < left.length; index++) difference |= (left[index] as number) ^ (right[index] as number);
  return difference === 0;
}
