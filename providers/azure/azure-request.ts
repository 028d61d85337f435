import type {
  CanonicalChatRequest,
  CanonicalEmbeddingsRequest,
  ClientDialectId,
  UpstreamRequest,
  UpstreamTarget,
} from '../../src/canonical/index.ts';
import {
  buildOpenAICompatibleChatRequest,
  buildOpenAICompatibleEmbeddingsRequest,
  buildOpenAICompatibleNativeRequest,
} from '../openai-compatible/openai-compatible-request.ts';
import { azureAuthenticationHeaders } from './azure-authentication.ts';
import { azureV1APIVersion, readAzureOptions, type AzureOptions } from './azure-options.ts';

/**
 * The resource endpoint (`https://{resource}.openai.azure.com`) from a deployment's base URL. The base URL may also
 * be given as the v1 API's base (`.../openai/v1`, what the OpenAI SDKs take) or `.../openai`: both are cut back.
 *
 * @example
 * azureResourceEndpoint('https://contoso.openai.azure.com/openai/v1/'); // 'https://contoso.openai.azure.com'
 */
export function azureResourceEndpoint(baseURL: string): string {
  return baseURL.replace(/\/+$/, '').replace(/\/openai(?:\/v1)?$/, '');
}

/** The v1 API's base: `{endpoint}/openai/v1`. */
function v1Base(target: UpstreamTarget): string {
  return `${azureResourceEndpoint(target.baseURL)}/openai/v1`;
}

/**
 * Where an operation goes: the v1 API (`{endpoint}/openai/v1{path}`), or with a dated version the classic
 * deployment URL (`{endpoint}/openai/deployments/{deployment}{path}?api-version=...`).
 */
function operationURL(
  target: UpstreamTarget,
  options: AzureOptions,
  path: '/chat/completions' | '/embeddings',
): string {
  if (options.apiVersion === azureV1APIVersion) return `${v1Base(target)}${path}`;
  const deployment = encodeURIComponent(target.model);
  return `${azureResourceEndpoint(target.baseURL)}/openai/deployments/${deployment}${path}?api-version=${encodeURIComponent(options.apiVersion)}`;
}

/**
 * The target the OpenAI-compatible builders get: no bearer key of theirs (Azure's credential header is added here),
 * and `max_completion_tokens` unless the config says otherwise (every GA Azure version takes it; reasoning
 * deployments reject `max_tokens`).
 */
function openAICompatibleTarget(target: UpstreamTarget, credentials: Record<string, string>): UpstreamTarget {
  return {
    ...target,
    apiKey: undefined,
    headers: { ...credentials, ...target.headers },
    options: { maxTokensField: 'max_completion_tokens', ...target.options },
  };
}

/**
 * Builds an Azure OpenAI chat request: the OpenAI-compatible body (the deployment name is `model`), Azure's URL for
 * the configured API version, and its credential header (`api-key`, or `Authorization: Bearer` with an Entra ID
 * token, fetched and cached for client credentials). Config headers win over the credential header.
 *
 * @example
 * const upstream = await buildAzureChatRequest(request, {
 *   providerName: 'azure', baseURL: 'https://contoso.openai.azure.com', model: 'gpt-4o-prod',
 *   apiKey: '...', headers: {}, options: {},
 * });
 * // upstream.url === 'https://contoso.openai.azure.com/openai/v1/chat/completions'
 */
export async function buildAzureChatRequest(
  request: CanonicalChatRequest,
  target: UpstreamTarget,
): Promise<UpstreamRequest> {
  const options = readAzureOptions(target.options);
  const credentials = await azureAuthenticationHeaders(options.authentication, target);
  const built = buildOpenAICompatibleChatRequest(request, openAICompatibleTarget(target, credentials));
  return { ...built, url: operationURL(target, options, '/chat/completions') };
}

/**
 * Builds an Azure OpenAI embeddings request (URL and credentials as {@link buildAzureChatRequest}).
 *
 * @example
 * (await buildAzureEmbeddingsRequest({ model: 'embed', input: ['hi'] }, target)).url;
 * // 'https://contoso.openai.azure.com/openai/v1/embeddings'
 */
export async function buildAzureEmbeddingsRequest(
  request: CanonicalEmbeddingsRequest,
  target: UpstreamTarget,
): Promise<UpstreamRequest> {
  const options = readAzureOptions(target.options);
  const credentials = await azureAuthenticationHeaders(options.authentication, target);
  const built = buildOpenAICompatibleEmbeddingsRequest(request, openAICompatibleTarget(target, credentials));
  return { ...built, url: operationURL(target, options, '/embeddings') };
}

/**
 * Builds the pass-through request for a body in an OpenAI dialect Azure serves: chat and embeddings at the
 * configured API version's URL, Responses always at the v1 API (`{endpoint}/openai/v1/responses`: the classic
 * `/openai/responses?api-version=` form would put a query before the `/{id}` the gateway appends for retrieval).
 * Async for client credentials: the token comes from the shared cache.
 *
 * @example
 * (await buildAzureNativeRequest('openai-responses', body, target)).url;
 * // 'https://contoso.openai.azure.com/openai/v1/responses'
 */
export async function buildAzureNativeRequest(
  dialect: ClientDialectId,
  body: Record<string, unknown>,
  target: UpstreamTarget,
): Promise<UpstreamRequest> {
  const options = readAzureOptions(target.options);
  const credentials = await azureAuthenticationHeaders(options.authentication, target);
  const built = buildOpenAICompatibleNativeRequest(dialect, body, openAICompatibleTarget(target, credentials));
  if (dialect === 'openai-chat') return { ...built, url: operationURL(target, options, '/chat/completions') };
  if (dialect === 'openai-embeddings') return { ...built, url: operationURL(target, options, '/embeddings') };
  if (dialect === 'openai-responses') return { ...built, url: `${v1Base(target)}/responses` };
  throw new Error(`azure-openai cannot pass through ${dialect}`);
}

/**
 * The health check: `GET {endpoint}/openai/v1/models` with the deployment's credentials (costs no tokens; served on
 * every resource whatever API version its requests use).
 *
 * @example
 * (await buildAzureHealthCheckRequest(target)).url; // 'https://contoso.openai.azure.com/openai/v1/models'
 */
export async function buildAzureHealthCheckRequest(target: UpstreamTarget): Promise<UpstreamRequest> {
  const options = readAzureOptions(target.options);
  const credentials = await azureAuthenticationHeaders(options.authentication, target);
  return {
    url: `${v1Base(target)}/models`,
    method: 'GET',
    headers: { ...credentials, ...target.headers },
    body: undefined,
  };
}
