import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isGatewayError, type GatewayError } from '../../src/errors.ts';
import {
  dropRejectedVertexToken,
  jwtBearerGrantType,
  vertexAccessToken,
  vertexTokenRefreshMarginMs,
} from './vertex-credentials.ts';
import { cloudPlatformScope } from './vertex-jwt.ts';
import {
  generateTestKeyPair,
  startTestTokenEndpoint,
  testServiceAccount,
  vertexTestTarget,
  type TestKeyPair,
  type TestTokenEndpoint,
} from '../../tests/support/vertex-test-support.ts';

let keys: TestKeyPair;
let endpoint: TestTokenEndpoint;
/** Each test uses its own account: the token caches are shared per identity for the whole process. */
let accountNumber = 0;
const nextEmail = (): string => `gateway-${(accountNumber += 1)}@test-project.iam.gserviceaccount.com`;

beforeAll(async () => {
  keys = generateTestKeyPair();
  endpoint = await startTestTokenEndpoint(keys.publicKey);
});

afterAll(async () => {
  await endpoint.close();
});

async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (error) {
    if (isGatewayError(error)) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('vertexAccessToken with a service account', () => {
  it('signs a verifiable RS256 assertion and shares one token fetch among 20 concurrent first requests', async () => {
    const email = nextEmail();
    const before = endpoint.received.length;
    const target = vertexTestTarget('gemini-2.5-flash', {
      accessToken: undefined,
      serviceAccount: testServiceAccount(keys, email, endpoint.url),
    });
    const now = Date.UTC(2026, 0, 1);

    const tokens = await Promise.all(Array.from({ length: 20 }, () => vertexAccessToken(target, { now: () => now })));

    expect(endpoint.received.length - before).toBe(1);
    expect(new Set(tokens).size).toBe(1);
    const assertion = endpoint.received[before];
    expect(assertion?.signatureValid).toBe(true);
    expect(assertion?.grantType).toBe(jwtBearerGrantType);
    expect(assertion?.header).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'key-id-1' });
    expect(assertion?.claims).toEqual({
      iss: email,
      scope: cloudPlatformScope,
      aud: endpoint.url,
      iat: now / 1000,
      exp: now / 1000 + 3600,
    });
  });

  it('drops a token Vertex rejected with 401, so the next request exchanges a fresh one', async () => {
    const target = vertexTestTarget('gemini-2.5-flash', {
      accessToken: undefined,
      serviceAccount: testServiceAccount(keys, nextEmail(), endpoint.url),
    });
    const before = endpoint.received.length;
    const first = await vertexAccessToken(target);
    expect(await vertexAccessToken(target)).toBe(first);
    const rejected = {
      url: 'https://x',
      method: 'POST' as const,
      headers: { Authorization: `Bearer ${first}` },
      body: '{}',
    };
    dropRejectedVertexToken(rejected, target);
    const second = await vertexAccessToken(target);
    expect(second).not.toBe(first);
    expect(endpoint.received.length - before).toBe(2);
  });

  it('accepts the key file as JSON text', async () => {
    const target = vertexTestTarget('gemini-2.5-flash', {
      accessToken: undefined,
      serviceAccount: JSON.stringify(testServiceAccount(keys, nextEmail(), endpoint.url)),
    });
    await expect(vertexAccessToken(target)).resolves.toMatch(/^token-\d+$/);
  });

  it('refreshes the token before it expires, serving the old one meanwhile', async () => {
    const before = endpoint.received.length;
    let now = Date.UTC(2026, 0, 1);
    const clock = { now: () => now };
    const target = vertexTestTarget('gemini-2.5-flash', {
      accessToken: undefined,
      serviceAccount: testServiceAccount(keys, nextEmail(), endpoint.url),
    });

    const first = await vertexAccessToken(target, clock);
    now += 3600_000 - vertexTokenRefreshMarginMs - 60_000;
    expect(await vertexAccessToken(target, clock)).toBe(first);
    expect(endpoint.received.length - before).toBe(1);

    now += 2 * 60_000; // inside the refresh margin, not yet expired
    expect(await vertexAccessToken(target, clock)).toBe(first);
    // The background refresh lands when the endpoint answers; until then the old token is still served.
    let refreshed = first;
    for (let attempt = 0; attempt < 200 && refreshed === first; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      refreshed = await vertexAccessToken(target, clock);
    }

    expect(endpoint.received.length - before).toBe(2);
    expect(refreshed).not.toBe(first);
    expect(endpoint.received[before + 1]?.claims.iat).toBe(now / 1000);
  });

  it('answers a token endpoint 401 with a clear, retryable 502 that hides the key and the assertion', async () => {
    const previous = endpoint.answer;
    endpoint.answer = () => ({
      status: 401,
      body: { error: 'invalid_client', error_description: 'The OAuth client was disabled.' },
    });
    try {
      const email = nextEmail();
      const target = vertexTestTarget('gemini-2.5-flash', {
        accessToken: undefined,
        serviceAccount: testServiceAccount(keys, email, endpoint.url),
      });
      const error = await rejection(vertexAccessToken(target));

      expect(error).toMatchObject({
        status: 502,
        type: 'upstream_error',
        code: 'upstream_authentication_failed',
        provider: 'vertex',
        retryable: true,
        upstreamStatus: 401,
      });
      expect(error.message).toContain('invalid_client: The OAuth client was disabled.');
      expect(error.message).toContain(email);
      expect(error.message).not.toContain('PRIVATE KEY');
      expect(error.message).not.toMatch(/eyJ[\w-]+\.eyJ/);
    } finally {
      endpoint.answer = previous;
    }
  });

  it('answers a key Web Crypto cannot import with a 500 that does not quote the key', async () => {
    const garbage = `-----BEGIN PRIVATE KEY-----\n${btoa('not a key at all, only bytes')}\n-----END PRIVATE KEY-----\n`;
    const target = vertexTestTarget('gemini-2.5-flash', {
      accessToken: undefined,
      serviceAccount: { ...testServiceAccount(keys, nextEmail(), endpoint.url), private_key: garbage },
    });
    const error = await rejection(vertexAccessToken(target));

    expect(error).toMatchObject({ status: 500, code: 'invalid_provider_options', provider: 'vertex' });
    expect(error.message).not.toContain(btoa('not a key at all, only bytes'));
  });
});

describe('vertexAccessToken with a given token', () => {
  it('uses options.accessToken as it is', async () => {
    await expect(vertexAccessToken(vertexTestTarget('gemini-2.5-flash'))).resolves.toBe('ya29.test-token');
  });

  it("falls back to the deployment's apiKey", async () => {
    const target = { ...vertexTestTarget('gemini-2.5-flash', { accessToken: undefined }), apiKey: 'ya29.from-key' };
    await expect(vertexAccessToken(target)).resolves.toBe('ya29.from-key');
  });

  it('is a 500 naming the missing configuration when there is no credential at all', async () => {
    const error = await rejection(vertexAccessToken(vertexTestTarget('gemini-2.5-flash', { accessToken: undefined })));
    expect(error).toMatchObject({ status: 500, code: 'invalid_provider_options' });
    expect(error.message).toContain('options.serviceAccount, options.accessToken or apiKey');
  });
});
