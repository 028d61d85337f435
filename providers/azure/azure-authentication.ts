import type { UpstreamRequest, UpstreamTarget } from '../../src/canonical/index.ts';
import {
  bearerTokenOf,
  invalidateSharedAccessToken,
  sharedAccessTokenCache,
  type AccessTokenCache,
} from '../shared/access-token-cache.ts';
import { requestAccessToken } from '../shared/token-endpoint.ts';
import {
  azureOpenAIProviderId,
  readAzureOptions,
  type AzureAuthentication,
  type AzureClientCredentials,
} from './azure-options.ts';

/** The identity a client-credentials token belongs to: the shared cache's key (no secret in it). */
function credentialIdentity(credentials: AzureClientCredentials): string {
  return [
    azureOpenAIProviderId,
    credentials.authorityHost,
    credentials.tenantId,
    credentials.clientId,
    credentials.scope,
  ]
    .map((part) => encodeURIComponent(part))
    .join('|');
}

/**
 * The token cache of a service principal, shared by every deployment and request with the same authority, tenant,
 * client and scope (one token fetch for all of them; see providers/shared/access-token-cache.ts).
 *
 * @example
 * const token = await azureClientCredentialsTokenCache(credentials).get();
 */
export function azureClientCredentialsTokenCache(credentials: AzureClientCredentials): AccessTokenCache {
  const identity = credentialIdentity(credentials);
  return sharedAccessTokenCache(identity, {
    fetchToken: () =>
      requestAccessToken({
        url: `${credentials.authorityHost}/${encodeURIComponent(credentials.tenantId)}/oauth2/v2.0/token`,
        form: {
          grant_type: 'client_credentials',
          client_id: credentials.clientId,
          client_secret: credentials.clientSecret,
          scope: credentials.scope,
        },
        provider: azureOpenAIProviderId,
        label: 'Microsoft Entra ID',
      }),
  });
}

/** The `api-key` header when the deployment has a key; none otherwise (the upstream's 401 then says so). */
function apiKeyHeader(target: UpstreamTarget): Record<string, string> {
  return target.apiKey === undefined || target.apiKey === '' ? {} : { 'api-key': target.apiKey };
}

/**
 * The credential header of a request: `api-key`, a static Entra ID token, or for client credentials a token from the
 * shared cache (fetched once for concurrent requests, refreshed before it expires).
 *
 * @example
 * const headers = await azureAuthenticationHeaders(readAzureOptions(target.options).authentication, target);
 * // { authorization: 'Bearer eyJ0...' } or { 'api-key': '...' }
 */
export async function azureAuthenticationHeaders(
  authentication: AzureAuthentication,
  target: UpstreamTarget,
): Promise<Record<string, string>> {
  if (authentication.kind === 'entra-token') return { authorization: `Bearer ${authentication.token}` };
  if (authentication.kind === 'api-key') return apiKeyHeader(target);
  const token = await azureClientCredentialsTokenCache(authentication.credentials).get();
  return { authorization: `Bearer ${token}` };
}

/**
 * After Azure answered 401 to `request`: drops the service principal's cached Entra ID token that request carried, so
 * the next request fetches a fresh one (an `api-key` or a static token is the operator's to replace).
 *
 * @example
 * dropRejectedAzureToken(rejectedRequest, deployment.target);
 */
export function dropRejectedAzureToken(request: UpstreamRequest, target: UpstreamTarget): void {
  const { authentication } = readAzureOptions(target.options);
  const token = bearerTokenOf(request.headers);
  if (authentication.kind !== 'client-credentials' || token === undefined) return;
  invalidateSharedAccessToken(credentialIdentity(authentication.credentials), token);
}
