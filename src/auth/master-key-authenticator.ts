import { GatewayError } from '../errors.ts';
import type { AuthContext, Authenticator } from './authenticator.ts';
import { maxPresentedSecretLength } from './presented-secret.ts';

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
 * Authenticates the master key only. The presented secret is compared with the master key in constant time
 * ({@link isMasterKey}: the time depends on the master key's length only, never on where they differ nor on the
 * presented length), with no hash on the way: a request with the master key costs one loop over ~50 characters. A
 * secret longer than `maxSecretLength` is refused first (that length is public, so its timing tells nothing).
 *
 * @example
 * const authenticator = createMasterKeyAuthenticator(environment.TORII_MASTER_KEY);
 * const caller = authenticator.authenticate('sk-my-master-key');
 */
export function createMasterKeyAuthenticator(
  masterKey: string,
  options: MasterKeyAuthenticatorOptions = {},
): Authenticator {
  const maxSecretLength = checkMasterKey(masterKey, options.maxSecretLength);
  return {
    authenticate(secret) {
      if (secret === undefined || secret.length === 0) throw invalidKeyError(undefined);
      if (secret.length > maxSecretLength || !isMasterKey(secret, masterKey)) throw invalidKeyError(secret);
      return masterContext;
    },
  };
}

/**
 * Whether `secret` is the master key, compared in constant time: every code unit of the master key is visited once,
 * whatever the secret, and differences (the length's included) are folded into one value with no early exit, so the
 * time tells nothing about how much of a guess was right. The presented secret's own length is the caller's to know.
 */
export function isMasterKey(secret: string, masterKey: string): boolean {
  const presentedLength = secret.length;
  let difference = presentedLength ^ masterKey.length;
  for (let index = 0; index < masterKey.length; index++) {
    // Past the secret's end, compare with a code unit no string position can hold here (the lengths already differ).
    const presented = index < presentedLength ? secret.charCodeAt(index) : 0x1_0000;
    difference |= presented ^ masterKey.charCodeAt(index);
  }
  return difference === 0;
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

/** Options of {@link createMasterKeyAuthenticator}. */
export interface MasterKeyAuthenticatorOptions {
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
