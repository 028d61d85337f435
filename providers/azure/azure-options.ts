import { GatewayError } from '../../src/errors.ts';
import { validateOpenAICompatibleOptions } from '../openai-compatible/openai-compatible-request.ts';

/** The provider id errors from this translator carry. */
export const azureOpenAIProviderId = 'azure-openai';

/** Azure's v1 API (GA since August 2025, Microsoft's recommended surface): no dated `api-version` needed. */
export const azureV1APIVersion = 'v1';

/** Microsoft Entra ID's public-cloud authority. */
export const defaultAzureAuthorityHost = 'https://login.microsoftonline.com';

/** The token scope of Azure OpenAI (Cognitive Services) in the public cloud. */
export const defaultAzureTokenScope = 'https://cognitiveservices.azure.com/.default';

/** A dated Azure OpenAI data-plane version: `2024-10-21`, `2025-04-01-preview`. */
const datedAPIVersion = /^\d{4}-\d{2}-\d{2}(?:-preview)?$/;

/** Microsoft Entra ID client credentials (a service principal's secret). */
export interface AzureClientCredentials {
  tenantId: string;
  clientId: string;
  clientSecret: string;
  /** Without a trailing slash. */
  authorityHost: string;
  scope: string;
}

/**
 * How a deployment authenticates, in order of precedence: Entra ID client credentials (a token fetched and cached per
 * identity), a static Entra ID token, or the resource key (`api-key` header from the deployment's `apiKey`).
 */
export type AzureAuthentication =
  | { kind: 'client-credentials'; credentials: AzureClientCredentials }
  | { kind: 'entra-token'; token: string }
  | { kind: 'api-key' };

/**
 * Deployment options (`options` in the config) this translator reads, besides the OpenAI-compatible ones
 * (`maxTokensField`, default here `max_completion_tokens`, which every GA Azure API version accepts and reasoning
 * deployments require; `sendTopK`):
 *
 * - `apiVersion`: `v1` (default) calls the v1 API, `{endpoint}/openai/v1/chat/completions` with the deployment name as
 *   the body's `model`; a dated version (`2024-10-21`, `2025-04-01-preview`) calls the classic deployment URL,
 *   `{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=...`. Responses and the health check use
 *   the v1 API either way.
 * - `entraToken`: a Microsoft Entra ID access token sent as `Authorization: Bearer` (short-lived: for tokens the
 *   operator refreshes, e.g. through an environment variable).
 * - `tenantId`, `clientId`, `clientSecret` (all three or none): a service principal; its token is fetched from
 *   `{authorityHost}/{tenantId}/oauth2/v2.0/token` and shared by every request with the same identity.
 * - `authorityHost` (default `https://login.microsoftonline.com`) and `scope` (default
 *   `https://cognitiveservices.azure.com/.default`): for sovereign clouds (`https://login.microsoftonline.us`,
 *   `https://cognitiveservices.azure.us/.default`).
 */
export interface AzureOptions {
  apiVersion: string;
  authentication: AzureAuthentication;
}

const stringOptions = ['apiVersion', 'entraToken', 'tenantId', 'clientId', 'clientSecret', 'authorityHost', 'scope'];

function isHttpURL(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.search === '' && url.hash === '';
  } catch {
    return false;
  }
}

/** The problems of a deployment's options (`<option>: <reason>`), checked at start; empty when they are valid. */
export function validateAzureOptions(options: Record<string, unknown>): string[] {
  const problems = validateOpenAICompatibleOptions(options);
  for (const name of stringOptions) {
    const value = options[name];
    if (value !== undefined && (typeof value !== 'string' || value.trim() === ''))
      problems.push(`${name}: must be a non-empty string`);
  }
  const { apiVersion, entraToken, tenantId, clientId, clientSecret, authorityHost, scope } = options;
  if (typeof apiVersion === 'string' && apiVersion !== azureV1APIVersion && !datedAPIVersion.test(apiVersion))
    problems.push(
      `apiVersion: must be "v1" or a dated Azure OpenAI API version such as "2024-10-21", got ${JSON.stringify(apiVersion)}`,
    );
  const credentialParts = { tenantId, clientId, clientSecret };
  const given = Object.entries(credentialParts).filter(([, value]) => value !== undefined);
  if (given.length > 0 && given.length < 3) {
    const missing = Object.entries(credentialParts)
      .filter(([, value]) => value === undefined)
      .map(([name]) => name);
    for (const name of missing) problems.push(`${name}: required with ${given.map(([other]) => other).join(', ')}`);
  }
  if (given.length > 0 && entraToken !== undefined)
    problems.push('entraToken: give either entraToken or tenantId/clientId/clientSecret, not both');
  if (given.length === 0 && (authorityHost !== undefined || scope !== undefined))
    problems.push(
      `${authorityHost === undefined ? 'scope' : 'authorityHost'}: only used with tenantId, clientId and clientSecret`,
    );
  if (typeof authorityHost === 'string' && authorityHost.trim() !== '' && !isHttpURL(authorityHost))
    problems.push('authorityHost: must be an http(s) URL such as https://login.microsoftonline.com');
  return problems;
}

/** Reads and checks {@link AzureOptions}; a wrong value is a gateway configuration error (500). */
export function readAzureOptions(options: Record<string, unknown>): AzureOptions {
  const problems = validateAzureOptions(options);
  if (problems.length > 0) {
    throw new GatewayError({
      status: 500,
      type: 'api_error',
      code: 'invalid_provider_options',
      provider: azureOpenAIProviderId,
      message: `Invalid ${azureOpenAIProviderId} deployment options: ${problems.join('; ')}.`,
    });
  }
  const text = (name: string): string | undefined => {
    const value = options[name];
    return typeof value === 'string' ? value.trim() : undefined;
  };
  const apiVersion = text('apiVersion') ?? azureV1APIVersion;
  const tenantId = text('tenantId');
  const clientId = text('clientId');
  const clientSecret = text('clientSecret');
  const entraToken = text('entraToken');
  let authentication: AzureAuthentication = { kind: 'api-key' };
  if (tenantId !== undefined && clientId !== undefined && clientSecret !== undefined) {
    authentication = {
      kind: 'client-credentials',
      credentials: {
        tenantId,
        clientId,
        clientSecret,
        authorityHost: (text('authorityHost') ?? defaultAzureAuthorityHost).replace(/\/+$/, ''),
        scope: text('scope') ?? defaultAzureTokenScope,
      },
    };
  } else if (entraToken !== undefined) {
    authentication = { kind: 'entra-token', token: entraToken };
  }
  return { apiVersion, authentication };
}
