import { AwsV4Signer } from 'aws4fetch';
import type { UpstreamRequest } from '../../src/canonical/index.ts';
import type { BedrockCredentials } from './bedrock-options.ts';

/** The SigV4 service name of Bedrock's runtime (`bedrock-runtime.{region}.amazonaws.com` signs as `bedrock`). */
export const bedrockSigningService = 'bedrock';

/**
 * Derived signing keys (four HMACs each) by secret, day, region and service, shared by every request; bounded, since
 * a long-running gateway sees a new day's key per credential.
 */
const signingKeyCache = new Map<string, ArrayBuffer>();
const largestSigningKeyCache = 64;

/** What {@link authorizeBedrockRequest} signs: a request without credentials, its body already serialised. */
export interface UnsignedBedrockRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * Adds the credentials to a Bedrock request, without sending it (the gateway does the fetch):
 * - SigV4 (`aws4fetch`'s `AwsV4Signer`, Web Crypto): `authorization`, `x-amz-date` and, for temporary credentials,
 *   `x-amz-security-token`. The signature covers the method, the path (each segment URI-encoded twice, as AWS
 *   requires of every service but S3: a model id's `:` travels as `%3A` and is signed as `%253A`), the host, every
 *   header given here except the few AWS never signs (`content-type`, `user-agent`, ...) and the SHA-256 of `body`,
 *   the exact string sent. Headers added after signing would not be covered, so the config's headers are passed in.
 * - A Bedrock API key: `authorization: Bearer <key>`, nothing signed.
 *
 * `datetime` (`YYYYMMDD'T'HHMMSS'Z'`) fixes the signing time, for tests; by default it is now.
 *
 * @example
 * const signed = await authorizeBedrockRequest(
 *   { url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-lite-v1%3A0/converse', headers: {}, body: '{}' },
 *   { kind: 'sigv4', accessKeyId: 'AKIA...', secretAccessKey: '...', region: 'us-east-1' },
 * );
 * signed.headers.authorization; // 'AWS4-HMAC-SHA256 Credential=AKIA.../20250101/us-east-1/bedrock/aws4_request, ...'
 */
export async function authorizeBedrockRequest(
  request: UnsignedBedrockRequest,
  credentials: BedrockCredentials,
  datetime?: string,
): Promise<UpstreamRequest> {
  if (credentials.kind === 'bearer') {
    return {
      url: request.url,
      method: 'POST',
      headers: { ...request.headers, authorization: `Bearer ${credentials.apiKey}` },
      body: request.body,
    };
  }
  if (signingKeyCache.size > largestSigningKeyCache) signingKeyCache.clear();
  const signer = new AwsV4Signer({
    method: 'POST',
    url: request.url,
    headers: request.headers,
    body: request.body,
    accessKeyId: credentials.accessKeyId,
    secretAccessKey: credentials.secretAccessKey,
    ...(credentials.sessionToken === undefined ? {} : { sessionToken: credentials.sessionToken }),
    service: bedrockSigningService,
    region: credentials.region,
    cache: signingKeyCache,
    ...(datetime === undefined ? {} : { datetime }),
  });
  const signed = await signer.sign();
  const headers: Record<string, string> = {};
  signed.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { url: request.url, method: 'POST', headers, body: request.body };
}
