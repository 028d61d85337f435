import { generateKeyPairSync, verify } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { UpstreamTarget } from '../../src/canonical/index.ts';

/**
 * Test support for the Vertex tests (never imported by the translator): an RSA key pair, a service-account key built
 * on it, and a local OAuth token endpoint that verifies each JWT bearer assertion with the public key, as Google's
 * does, before it issues a token.
 */

/** A generated RSA key pair: the private key as PKCS#8 PEM (as in Google's key files), the public key as SPKI PEM. */
export interface TestKeyPair {
  privateKey: string;
  publicKey: string;
}

/** Makes a 2048-bit RSA key pair (slow-ish: make it once per test file). */
export function generateTestKeyPair(): TestKeyPair {
  return generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
}

/** A service-account key file's JSON for `clientEmail`, its `token_uri` pointing at `tokenUri`. */
export function testServiceAccount(keys: TestKeyPair, clientEmail: string, tokenUri: string): Record<string, string> {
  return {
    type: 'service_account',
    project_id: 'test-project',
    private_key_id: 'key-id-1',
    private_key: keys.privateKey,
    client_email: clientEmail,
    client_id: '123456789',
    token_uri: tokenUri,
  };
}

/** One assertion the token endpoint received, decoded and checked. */
export interface ReceivedAssertion {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  signatureValid: boolean;
  grantType: string | null;
}

/** A running local token endpoint. */
export interface TestTokenEndpoint {
  url: string;
  /** Every assertion received, in order. */
  received: ReceivedAssertion[];
  /** The answer to the next requests: a status and a JSON body (default 200 with a fresh token). */
  answer: (index: number) => { status: number; body: unknown };
  close(): Promise<void>;
}

function decodeSegment(segment: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/**
 * Starts a token endpoint on a free local port. It reads the form, verifies the assertion's RS256 signature with
 * `publicKey`, records it, and answers `answer(index)` (by default `{access_token: 'token-<n>', expires_in: 3600}`,
 * or a 400 `invalid_grant` when the signature does not verify). `delayMs` holds each answer, so concurrent callers
 * overlap.
 */
export async function startTestTokenEndpoint(publicKey: string, delayMs = 20): Promise<TestTokenEndpoint> {
  const received: ReceivedAssertion[] = [];
  const endpoint: TestTokenEndpoint = {
    url: '',
    received,
    answer: (index) => ({
      status: 200,
      body: { access_token: `token-${index + 1}`, expires_in: 3600, token_type: 'Bearer' },
    }),
    close: () => new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
  const server: Server = createServer((request, response) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (text += chunk));
    request.on('end', () => {
      const form = new URLSearchParams(text);
      const [header = '', claims = '', signature = ''] = (form.get('assertion') ?? '').split('.');
      const signatureValid = verify(
        'RSA-SHA256',
        Buffer.from(`${header}.${claims}`),
        publicKey,
        Buffer.from(signature, 'base64url'),
      );
      received.push({
        header: decodeSegment(header),
        claims: decodeSegment(claims),
        signatureValid,
        grantType: form.get('grant_type'),
      });
      const answer = signatureValid
        ? endpoint.answer(received.length - 1)
        : { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } };
      setTimeout(() => {
        response.writeHead(answer.status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(answer.body));
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  return endpoint;
}

/** A Vertex deployment target with the given options (a static access token unless they say otherwise). */
export function vertexTestTarget(model: string, options: Record<string, unknown> = {}): UpstreamTarget {
  return {
    providerName: 'vertex',
    baseURL: 'https://aiplatform.googleapis.com',
    model,
    apiKey: undefined,
    headers: {},
    options: { project: 'my-project', location: 'us-central1', accessToken: 'ya29.test-token', ...options },
  };
}
