import { describe, expect, it } from 'vitest';
import { parseGatewayConfig } from '../config/config-parse.ts';
import { GatewayError } from '../errors.ts';
import { createSecretRedactor, redactedError, secretsOfConfig, secretsOfUrl } from './secret-redactor.ts';

describe('createSecretRedactor', () => {
  it('replaces every occurrence of every secret, longest first, and its URL-encoded form', () => {
    const redactor = createSecretRedactor(['sk-abc/123+xyz', 'sk-abc', 'abcdef']);
    expect(redactor.redact('key sk-abc/123+xyz then sk-abc/123+xyz')).toBe('key [redacted] then [redacted]');
    expect(redactor.redact('url ?key=sk-abc%2F123%2Bxyz&x=1')).toBe('url ?key=[redacted]&x=1');
    expect(redactor.redact('prefix sk-abc only')).toBe('prefix [redacted] only');
  });

  it('leaves text without secrets, and secrets too short to be real keys, alone', () => {
    const redactor = createSecretRedactor(['x', 'abc', 'sk-real-secret']);
    const text = 'a plain message with abc and x';
    expect(redactor.redact(text)).toBe(text);
  });
});

describe('secretsOfUrl', () => {
  it('takes the password, the user name and credential-like query values, not the rest', () => {
    expect(secretsOfUrl('postgres://torii:p%40ss-word@db.internal:5432/torii?sslmode=require')).toEqual([
      'p%40ss-word',
      'p@ss-word',
      'torii',
      'torii',
    ]);
    expect(secretsOfUrl('https://example.com/v1?key=AIzaSecret123&api-version=2024-06-01')).toEqual(['AIzaSecret123']);
    expect(secretsOfUrl('not a url')).toEqual([]);
  });
});

describe('secretsOfConfig', () => {
  it('collects API keys, credential headers and base URL credentials of every deployment', () => {
    const config = parseGatewayConfig(
      {
        modelGroups: {
          a: { deployments: [{ provider: 'openai', model: 'm', apiKey: 'sk-openai-secret' }] },
          b: {
            deployments: [
              {
                provider: 'openai-compatible',
                model: 'm',
                baseURL: 'https://user:hunter22@proxy.example/v1?token=tok-secret',
                headers: { authorization: 'Bearer header-secret', 'x-title': 'torii' },
              },
            ],
          },
        },
      },
      {},
    );
    const secrets = secretsOfConfig(config);
    for (const secret of ['sk-openai-secret', 'header-secret', 'hunter22', 'tok-secret'])
      expect(secrets).toContain(secret);
    expect(secrets).not.toContain('torii');
  });

  it('collects the credentials in provider options, nested or in a service account given as JSON text', () => {
    const serviceAccount = { client_email: 'torii@project.iam.gserviceaccount.com', private_key: 'pem-secret-key' };
    const config = parseGatewayConfig(
      {
        modelGroups: {
          a: {
            deployments: [
              {
                provider: 'openai-compatible',
                model: 'm',
                baseURL: 'https://x.example',
                options: {
                  region: 'us-east-1',
                  secretAccessKey: 'aws-secret-value',
                  auth: { clientSecret: 'entra-secret' },
                },
              },
              {
                provider: 'openai-compatible',
                model: 'm',
                baseURL: 'https://x.example',
                options: { serviceAccount: JSON.stringify(serviceAccount) },
              },
            ],
          },
        },
      },
      {},
    );
    const secrets = secretsOfConfig(config);
    for (const secret of ['aws-secret-value', 'entra-secret', 'pem-secret-key']) expect(secrets).toContain(secret);
    expect(secrets).not.toContain('us-east-1');
    expect(secrets).not.toContain('torii@project.iam.gserviceaccount.com');
  });
});

describe('redactedError', () => {
  it('rebuilds an error whose message holds a secret, keeping everything else', () => {
    const redactor = createSecretRedactor(['sk-upstream-key']);
    const error = new GatewayError({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_authentication_failed',
      provider: 'openai',
      retryable: true,
      headers: { 'retry-after': '3' },
      message: 'Incorrect API key provided: sk-upstream-key.',
    });
    expect(redactedError(error, redactor)).toMatchObject({
      status: 502,
      code: 'upstream_authentication_failed',
      provider: 'openai',
      retryable: true,
      headers: { 'retry-after': '3' },
      message: 'Incorrect API key provided: [redacted].',
    });
    const clean = new GatewayError({ status: 400, type: 'invalid_request_error', message: 'fine' });
    expect(redactedError(clean, redactor)).toBe(clean);
  });
});
