import { describe, expect, it } from 'vitest';
import type { CanonicalChatRequest, UpstreamTarget } from '../../src/canonical/index.ts';
import { isGatewayError } from '../../src/errors.ts';
import { parseJson } from '../../src/framing/index.ts';
import { validateAzureOptions } from './azure-options.ts';
import {
  azureResourceEndpoint,
  buildAzureChatRequest,
  buildAzureEmbeddingsRequest,
  buildAzureHealthCheckRequest,
  buildAzureNativeRequest,
} from './azure-request.ts';

const target: UpstreamTarget = {
  providerName: 'azure',
  baseURL: 'https://contoso.openai.azure.com',
  model: 'gpt-4o-prod',
  apiKey: 'azure-key-123',
  headers: {},
  options: {},
};

const classic: UpstreamTarget = { ...target, options: { apiVersion: '2024-10-21' } };

function chatRequest(overrides: Partial<CanonicalChatRequest> = {}): CanonicalChatRequest {
  return {
    model: 'fast',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    stream: false,
    streamIncludeUsage: false,
    ...overrides,
  };
}

function bodyOf(request: { body: string | undefined }): Record<string, unknown> {
  const parsed = parseJson(request.body ?? '');
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value as Record<string, unknown>;
}

describe('azureResourceEndpoint', () => {
  it('cuts a v1 or /openai base back to the resource endpoint', () => {
    expect(azureResourceEndpoint('https://contoso.openai.azure.com')).toBe('https://contoso.openai.azure.com');
    expect(azureResourceEndpoint('https://contoso.openai.azure.com/')).toBe('https://contoso.openai.azure.com');
    expect(azureResourceEndpoint('https://contoso.openai.azure.com/openai/v1/')).toBe(
      'https://contoso.openai.azure.com',
    );
    expect(azureResourceEndpoint('https://contoso.openai.azure.com/openai')).toBe('https://contoso.openai.azure.com');
  });
});

describe('buildAzureChatRequest', () => {
  it('calls the v1 API by default, the deployment as model, with the api-key header', async () => {
    const request = await buildAzureChatRequest(chatRequest({ maxTokens: 50 }), target);
    expect(request.url).toBe('https://contoso.openai.azure.com/openai/v1/chat/completions');
    expect(request.method).toBe('POST');
    expect(request.headers).toEqual({ 'content-type': 'application/json', 'api-key': 'azure-key-123' });
    expect(bodyOf(request)).toEqual({
      model: 'gpt-4o-prod',
      messages: [{ role: 'user', content: 'Hi' }],
      max_completion_tokens: 50,
    });
  });

  it('calls the classic deployment URL with a dated api-version', async () => {
    const request = await buildAzureChatRequest(chatRequest(), { ...classic, model: 'my deployment' });
    expect(request.url).toBe(
      'https://contoso.openai.azure.com/openai/deployments/my%20deployment/chat/completions?api-version=2024-10-21',
    );
  });

  it('keeps the configured max tokens field and asks streams for usage', async () => {
    const request = await buildAzureChatRequest(chatRequest({ maxTokens: 9, stream: true }), {
      ...target,
      options: { maxTokensField: 'max_tokens' },
    });
    expect(bodyOf(request)).toMatchObject({ max_tokens: 9, stream: true, stream_options: { include_usage: true } });
  });

  it('sends a static Entra ID token as a bearer instead of the key; config headers win', async () => {
    const request = await buildAzureChatRequest(chatRequest(), {
      ...target,
      options: { entraToken: 'eyJ0.static' },
      headers: { 'x-ms-client-request-id': 'abc' },
    });
    expect(request.headers).toEqual({
      'content-type': 'application/json',
      authorization: 'Bearer eyJ0.static',
      'x-ms-client-request-id': 'abc',
    });
  });

  it('sends no credential header without a key', async () => {
    const request = await buildAzureChatRequest(chatRequest(), { ...target, apiKey: undefined });
    expect(request.headers).toEqual({ 'content-type': 'application/json' });
  });

  it('answers bad options with a 500 configuration error', async () => {
    const error = await buildAzureChatRequest(chatRequest(), { ...target, options: { apiVersion: 'latest' } }).catch(
      (caught: unknown) => caught,
    );
    expect(isGatewayError(error) && error.status).toBe(500);
    expect(isGatewayError(error) && error.code).toBe('invalid_provider_options');
  });
});

describe('buildAzureEmbeddingsRequest', () => {
  it('uses the v1 and the classic embeddings URLs', async () => {
    const request = { model: 'embed', input: ['hello'] };
    expect((await buildAzureEmbeddingsRequest(request, target)).url).toBe(
      'https://contoso.openai.azure.com/openai/v1/embeddings',
    );
    const built = await buildAzureEmbeddingsRequest(request, { ...classic, model: 'embed-small' });
    expect(built.url).toBe(
      'https://contoso.openai.azure.com/openai/deployments/embed-small/embeddings?api-version=2024-10-21',
    );
    expect(bodyOf(built)).toEqual({ model: 'embed-small', input: ['hello'] });
  });
});

describe('buildAzureNativeRequest', () => {
  const body = { model: 'gpt-4o-prod', input: 'Hi' };

  it('passes chat and embeddings through at the configured version, Responses at the v1 API', async () => {
    expect((await buildAzureNativeRequest('openai-chat', body, target)).url).toBe(
      'https://contoso.openai.azure.com/openai/v1/chat/completions',
    );
    expect((await buildAzureNativeRequest('openai-chat', body, classic)).url).toBe(
      'https://contoso.openai.azure.com/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21',
    );
    expect((await buildAzureNativeRequest('openai-embeddings', body, classic)).url).toBe(
      'https://contoso.openai.azure.com/openai/deployments/gpt-4o-prod/embeddings?api-version=2024-10-21',
    );
    for (const deployment of [target, classic]) {
      const request = await buildAzureNativeRequest('openai-responses', body, deployment);
      expect(request.url).toBe('https://contoso.openai.azure.com/openai/v1/responses');
      expect(request.headers['api-key']).toBe('azure-key-123');
      expect(request.headers.authorization).toBeUndefined();
      expect(request.body).toBe(JSON.stringify(body));
    }
  });

  it('refuses dialects Azure does not serve', async () => {
    await expect(buildAzureNativeRequest('anthropic-messages', body, target)).rejects.toThrow('cannot pass through');
  });
});

describe('buildAzureHealthCheckRequest', () => {
  it('lists the v1 models with the credentials and no body', async () => {
    expect(await buildAzureHealthCheckRequest(classic)).toEqual({
      url: 'https://contoso.openai.azure.com/openai/v1/models',
      method: 'GET',
      headers: { 'api-key': 'azure-key-123' },
      body: undefined,
    });
  });
});

describe('validateAzureOptions', () => {
  it('accepts no options, v1, dated versions and complete client credentials', () => {
    expect(validateAzureOptions({})).toEqual([]);
    expect(validateAzureOptions({ apiVersion: 'v1' })).toEqual([]);
    expect(validateAzureOptions({ apiVersion: '2025-04-01-preview' })).toEqual([]);
    expect(
      validateAzureOptions({
        tenantId: 't',
        clientId: 'c',
        clientSecret: 's',
        authorityHost: 'https://login.microsoftonline.us',
        scope: 'https://cognitiveservices.azure.us/.default',
      }),
    ).toEqual([]);
  });

  it('names each bad option', () => {
    expect(validateAzureOptions({ apiVersion: 'latest' })).toEqual([
      'apiVersion: must be "v1" or a dated Azure OpenAI API version such as "2024-10-21", got "latest"',
    ]);
    expect(validateAzureOptions({ tenantId: 't' })).toEqual([
      'clientId: required with tenantId',
      'clientSecret: required with tenantId',
    ]);
    expect(validateAzureOptions({ tenantId: 't', clientId: 'c', clientSecret: 's', entraToken: 'x' })).toEqual([
      'entraToken: give either entraToken or tenantId/clientId/clientSecret, not both',
    ]);
    expect(validateAzureOptions({ scope: 'x' })).toEqual(['scope: only used with tenantId, clientId and clientSecret']);
    expect(
      validateAzureOptions({ tenantId: 't', clientId: 'c', clientSecret: 's', authorityHost: 'login.microsoft' }),
    ).toEqual(['authorityHost: must be an http(s) URL such as https://login.microsoftonline.com']);
    expect(validateAzureOptions({ entraToken: 42, maxTokensField: 'tokens' })).toEqual([
      'maxTokensField: must be "max_tokens" or "max_completion_tokens", got "tokens"',
      'entraToken: must be a non-empty string',
    ]);
  });
});
