import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CanonicalChatRequest, UpstreamTarget } from '../../src/canonical/index.ts';
import { isGatewayError } from '../../src/errors.ts';
import { buildAzureChatRequest, buildAzureHealthCheckRequest, buildAzureNativeRequest } from './azure-request.ts';
import { azureOpenAITranslator } from './azure-translator.ts';

/*
 * Client credentials against a local Entra ID token endpoint: one token fetch for many concurrent first requests,
 * a refresh before the token expires, the bearer header on the request. Each test uses its own tenant, since the
 * token cache is shared per identity for the whole process.
 */

interface TokenCall {
  path: string;
  form: Record<string, string>;
}

let server: Server;
let authorityHost: string;
const calls: TokenCall[] = [];
let answer: (call: TokenCall) => { status: number; body: unknown; delayMs?: number } = (call) => ({
  status: 200,
  body: { token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: `token-${calls.length}` },
  delayMs: call.form.client_id === 'slow' ? 50 : 0,
});
const defaultAnswer = answer;

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const call = { path: request.url ?? '', form: Object.fromEntries(new URLSearchParams(body)) };
      calls.push(call);
      const { status, body: answerBody, delayMs = 0 } = answer(call);
      setTimeout(() => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(answerBody));
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  authorityHost = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

afterEach(() => {
  calls.length = 0;
  answer = defaultAnswer;
  vi.useRealTimers();
});

function servicePrincipal(tenantId: string, clientId = 'slow'): UpstreamTarget {
  return {
    providerName: 'azure',
    baseURL: 'https://contoso.openai.azure.com',
    model: 'gpt-4o-prod',
    apiKey: 'ignored-key',
    headers: {},
    options: { tenantId, clientId, clientSecret: 'client-secret-value', authorityHost },
  };
}

const chatRequest: CanonicalChatRequest = {
  model: 'fast',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
  stream: false,
  streamIncludeUsage: false,
};

/** Waits (real time) until the token endpoint has been called `count` times. */
async function tokenCalls(count: number): Promise<void> {
  for (let attempt = 0; attempt < 200 && calls.length < count; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  // Let the answer reach the cache.
  await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('Azure OpenAI with Entra ID client credentials', () => {
  it('fetches one token for 20 concurrent first requests and sends it as a bearer', async () => {
    const target = servicePrincipal('tenant-concurrent');
    const requests = await Promise.all(Array.from({ length: 20 }, () => buildAzureChatRequest(chatRequest, target)));
    expect(calls).toHaveLength(1);
    expect(calls[0]?.path).toBe('/tenant-concurrent/oauth2/v2.0/token');
    expect(calls[0]?.form).toEqual({
      grant_type: 'client_credentials',
      client_id: 'slow',
      client_secret: 'client-secret-value',
      scope: 'https://cognitiveservices.azure.com/.default',
    });
    for (const request of requests) {
      expect(request.headers.authorization).toBe('Bearer token-1');
      expect(request.headers['api-key']).toBeUndefined();
    }
    await buildAzureChatRequest(chatRequest, target);
    expect(calls).toHaveLength(1);
  });

  it('refreshes the token before it expires, serving the old one meanwhile', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    const target = servicePrincipal('tenant-refresh', 'fast');
    expect((await buildAzureChatRequest(chatRequest, target)).headers.authorization).toBe('Bearer token-1');

    vi.setSystemTime(new Date('2026-01-01T00:50:00Z')); // 9 minutes left: outside the 5-minute margin
    expect((await buildAzureChatRequest(chatRequest, target)).headers.authorization).toBe('Bearer token-1');
    expect(calls).toHaveLength(1);

    vi.setSystemTime(new Date('2026-01-01T00:56:00Z')); // 3 minutes left: refresh in the background
    expect((await buildAzureChatRequest(chatRequest, target)).headers.authorization).toBe('Bearer token-1');
    await tokenCalls(2);
    expect(calls).toHaveLength(2);
    expect((await buildAzureChatRequest(chatRequest, target)).headers.authorization).toBe('Bearer token-2');
  });

  it("answers a rejected secret with a 502 that keeps Entra's error and hides the secret", async () => {
    answer = () => ({
      status: 401,
      body: {
        error: 'invalid_client',
        error_description: 'AADSTS7000215: Invalid client secret provided (client-secret-value).',
      },
    });
    const error = await buildAzureChatRequest(chatRequest, servicePrincipal('tenant-rejected')).catch(
      (caught: unknown) => caught,
    );
    if (!isGatewayError(error)) throw new Error('expected a GatewayError');
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_authentication_failed');
    expect(error.message).toContain('invalid_client: AADSTS7000215');
    expect(error.message).not.toContain('client-secret-value');
  });

  it('pass-through and the health check wait for the one shared token fetch', async () => {
    const target = servicePrincipal('tenant-native', 'fast');
    const [native, responses, health] = await Promise.all([
      buildAzureNativeRequest('openai-chat', { model: 'gpt-4o-prod' }, target),
      buildAzureNativeRequest('openai-responses', { model: 'gpt-4o-prod' }, target),
      buildAzureHealthCheckRequest(target),
    ]);
    expect(calls).toHaveLength(1);
    for (const request of [native, responses, health]) expect(request.headers.authorization).toBe('Bearer token-1');
  });

  it('drops a token Azure rejected with 401, so the next request fetches a fresh one', async () => {
    const target = servicePrincipal('tenant-rejected', 'fast');
    const first = await buildAzureChatRequest(chatRequest, target);
    expect(first.headers.authorization).toBe('Bearer token-1');
    // A stale request (a token the cache no longer holds) drops nothing.
    azureOpenAITranslator.onCredentialsRejected?.({ ...first, headers: { authorization: 'Bearer old-token' } }, target);
    expect((await buildAzureChatRequest(chatRequest, target)).headers.authorization).toBe('Bearer token-1');
    azureOpenAITranslator.onCredentialsRejected?.(first, target);
    expect((await buildAzureChatRequest(chatRequest, target)).headers.authorization).toBe('Bearer token-2');
    expect(calls).toHaveLength(2);
  });
});
