/**
 * The RS256 JWT a Google service account signs to get an access token (RFC 7523 JWT bearer grant), written with Web
 * Crypto alone so it runs unchanged in Workers, Deno, Bun and Node.
 *
 * `jose` (maintained, Web Crypto based, tree-shakeable) could replace the ~40 lines below with `importPKCS8` and
 * `new SignJWT(...).sign(key)`. It is not used because it is not a dependency of the project (adding packages is the
 * lead's call): the trade-off is a few kilobytes of Worker bundle and one more dependency to track, against owning
 * base64url and PEM handling here. Only one algorithm (RS256) and one key format (PKCS#8, what Google issues) are
 * needed, which is what keeps the hand-written version small.
 */
import { GatewayError } from '../../src/errors.ts';
import { vertexProviderId } from './vertex-options.ts';
import { pkcs8FromPem, type VertexServiceAccount } from './vertex-service-account.ts';

/** The OAuth scope Vertex AI needs. */
export const cloudPlatformScope = 'https://www.googleapis.com/auth/cloud-platform';

/** How long a signed assertion is valid: one hour, the longest Google accepts. */
export const assertionLifetimeSeconds = 3600;

/** Imported keys by service-account identity, with the PEM they came from (a rotated key is imported again). */
const importedKeys = new Map<string, { privateKey: string; key: Promise<CryptoKey> }>();

/** Most imported keys kept; identities come from config, so this only bounds a pathological config. */
const importedKeyLimit = 64;

/** Base64url without padding (RFC 7515 §2) of bytes. */
function base64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Base64url without padding of a JSON value's UTF-8 text. */
function base64UrlJson(value: unknown): string {
  return base64Url(new TextEncoder().encode(JSON.stringify(value)));
}

/**
 * The account's private key as a Web Crypto `CryptoKey` (RSASSA-PKCS1-v1_5 with SHA-256, sign only), imported once
 * per account and key. A key Web Crypto refuses is a 500 naming the account, never quoting the key.
 */
export function importServiceAccountKey(account: VertexServiceAccount): Promise<CryptoKey> {
  const identity = `${account.clientEmail}|${account.privateKeyId ?? ''}`;
  const cached = importedKeys.get(identity);
  if (cached !== undefined && cached.privateKey === account.privateKey) return cached.key;
  const key = importKey(account);
  importedKeys.delete(identity);
  importedKeys.set(identity, { privateKey: account.privateKey, key });
  // A failed import is not kept: the next request (after a config fix) tries again.
  key.catch(() => {
    if (importedKeys.get(identity)?.key === key) importedKeys.delete(identity);
  });
  while (importedKeys.size > importedKeyLimit) {
    const oldest = importedKeys.keys().next().value;
    if (oldest === undefined) break;
    importedKeys.delete(oldest);
  }
  return key;
}

async function importKey(account: VertexServiceAccount): Promise<CryptoKey> {
  const der = pkcs8FromPem(account.privateKey);
  try {
    if (der === undefined) throw new Error('not a PKCS#8 PEM key');
    return await crypto.subtle.importKey('pkcs8', der, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['sign']);
  } catch (error) {
    throw new GatewayError({
      status: 500,
      type: 'api_error',
      code: 'invalid_provider_options',
      provider: vertexProviderId,
      message: `The gateway's Vertex service account ${account.clientEmail} has a private_key that is not a usable RSA key (PKCS#8).`,
      // The cause is Web Crypto's own error, which names no key material.
      cause: error,
    });
  }
}

/**
 * Signs the JWT bearer assertion for `account`: header `{alg:'RS256', typ:'JWT', kid}`, claims
 * `{iss, scope, aud: token_uri, iat, exp: iat + 3600}`, RS256 over `header.claims`, all base64url without padding.
 *
 * @example
 * const assertion = await signServiceAccountAssertion(account, cloudPlatformScope, Date.now());
 * // 'eyJhbGciOiJSUzI1NiIs...'
 */
export async function signServiceAccountAssertion(
  account: VertexServiceAccount,
  scope: string,
  nowMs: number,
): Promise<string> {
  const key = await importServiceAccountKey(account);
  const issuedAt = Math.floor(nowMs / 1000);
  const header = {
    alg: 'RS256',
    typ: 'JWT',
    ...(account.privateKeyId === undefined ? {} : { kid: account.privateKeyId }),
  };
  const claims = {
    iss: account.clientEmail,
    scope,
    aud: account.tokenUri,
    iat: issuedAt,
    exp: issuedAt + assertionLifetimeSeconds,
  };
  const signingInput = `${base64UrlJson(header)}.${base64UrlJson(claims)}`;
  const signature = await crypto.subtle.sign('RSASSA-PKCS1-v1_5', key, new TextEncoder().encode(signingInput));
  return `${signingInput}.${base64Url(new Uint8Array(signature))}`;
}
