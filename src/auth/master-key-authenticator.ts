import { GatewayError } from '../errors.ts';
import type { AuthContext, Authenticator } from './authenticator.ts';
import { maxPresentedSecretLength } from './presented-secret.ts';
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
 * digests compared in constant time, so neither the key's content nor its length leaks through timing. A secret
 * longer than `maxSecretLength` is refused without hashing (that length is public, so its timing tells nothing).
 *
 * @example
 * const authenticator = createMasterKeyAuthenticator(environment.TORII_MASTER_KEY);
 * const caller = await authenticator.authenticate('sk-my-master-key');
 */
export function createMasterKeyAuthenticator(
  masterKey: string,
  options: MasterKeyAuthenticatorOptions = {},
): Authenticator {
  const maxSecretLength = checkMasterKey(masterKey, options.maxSecretLength);
  const digest = options.sha256 ?? sha256;
  const expectedDigest = digest(masterKey);
  return {
    authenticate(secret) {
      if (secret === undefined || secret.length === 0) throw invalidKeyError(undefined);
      if (secret.length > maxSecretLength) throw invalidKeyError(secret);
      const presented = digest(secret);
      // A runtime with a synchronous hash (Node) answers without a single await.
      if (!(presented instanceof Promise) && !(expectedDigest instanceof Promise))
        return verify(presented, expectedDigest, secret);
      return Promise.all([presented, expectedDigest]).then(([presentedBytes, expectedBytes]) =>
        verify(presentedBytes, expectedBytes, secret),
      );
    },
  };
}

/**
 * Checks the master key against the length limits and returns the longest secret to look at: at least 8 characters
 * (shorter keys are guessable), and no longer than the secret limit (default {@link maxPresentedSecretLength}),
 * since a longer one could never be presented.
 */
export function checkMasterKey(masterKey: string, maxSecretLength = maxPresentedSecretLength): number {
  if (masterKey.length < 8) throw new Error('The master key must be at least 8 characters long.');
  if (masterKey.length > maxSecretLength)
    throw new Error(`The master key must be at most ${maxSecretLength} characters long.`);
  return maxSecretLength;
}

function verify(presented: Uint8Array, expected: Uint8Array, secret: string): AuthContext {
  if (!constantTimeEqual(presented, expected)) throw invalidKeyError(secret);
  return masterContext;
}

/** Options of {@link createMasterKeyAuthenticator}. */
export interface MasterKeyAuthenticatorOptions {
  /** SHA-256 of a string's UTF-8 bytes; defaults to Web Crypto. Node passes its synchronous `node:crypto` hash. */
  sha256?: (text: string) => Uint8Array | Promise<Uint8Array>;
  /**
   * Longer secrets are refused with the usual 401 before they are hashed. Default {@link maxPresentedSecretLength}
   * (1024 characters).
   */
  maxSecretLength?: number;
}

/** Compares two byte arrays of equal length without an early exit. */
export function constantTimeEqual(left: Uint8Array, right: Uint8Array): boolean {
  if (left.length !== right.length) return false;
  let difference = 0;
  for (let index = 0; index < left.length; index++) difference |= (left[index] as number) ^ (right[index] as number);
  return difference === 0;
}
