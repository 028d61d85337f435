import type { UpstreamRequest, UpstreamTarget } from '../../src/canonical/index.ts';
import { GatewayError } from '../../src/errors.ts';
import { bearerTokenOf, invalidateSharedAccessToken, sharedAccessTokenCache } from '../shared/access-token-cache.ts';
import { requestAccessToken } from '../shared/token-endpoint.ts';
import { cloudPlatformScope, signServiceAccountAssertion } from './vertex-jwt.ts';
import { readVertexOptions, vertexProviderId } from './vertex-options.ts';
import { parseServiceAccount, type VertexServiceAccount } from './vertex-service-account.ts';

/** The RFC 7523 grant type a signed service-account assertion is exchanged with. */
export const jwtBearerGrantType = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** Refresh a service account's token this long before it expires (Google's tokens live an hour). */
export const vertexTokenRefreshMarginMs = 5 * 60_000;

/** Seams for tests: the clock and the fetch the token exchange uses. Production passes nothing. */
export interface VertexCredentialDependencies {
  now?: () => number;
  fetch?: typeof fetch;
}

/**
 * The OAuth access token for a Vertex request, by the deployment's credentials, in this order:
 * 1. `options.accessToken`, or the deployment's `apiKey`, used as given (a token from `gcloud auth print-access-token`
 *    or a metadata server, refreshed by whoever set it);
 * 2. `options.serviceAccount`: a JWT signed with the account's key, exchanged at its `token_uri`, and cached per
 *    account (client email, token URI and scope) across requests: concurrent first requests share one exchange, and the
 *    token is refreshed five minutes before it expires.
 *
 * With neither, a 500 names the missing configuration. A token endpoint that refuses the account is a retryable 502
 * `upstream_authentication_failed` carrying the endpoint's `error_description`; the key and the assertion never
 * appear in a message.
 *
 * @example
 * const token = await vertexAccessToken(target);
 * headers.authorization = `Bearer ${token}`;
 */
export async function vertexAccessToken(
  target: UpstreamTarget,
  dependencies: VertexCredentialDependencies = {},
): Promise<string> {
  const options = readVertexOptions(target.options);
  if (options.serviceAccount !== undefined) {
    const parsed = parseServiceAccount(options.serviceAccount);
    if (!parsed.ok) throw invalidCredentials(`its serviceAccount ${parsed.problem}`);
    return serviceAccountToken(parsed.account, dependencies);
  }
  const token = options.accessToken ?? target.apiKey;
  if (token === undefined || token.length === 0) {
    throw invalidCredentials('it has no credentials: set options.serviceAccount, options.accessToken or apiKey');
  }
  return token;
}

/** The shared cache's key of a service account: its identity, never its private key. */
function serviceAccountCacheKey(account: VertexServiceAccount): string {
  return `vertex|${account.clientEmail}|${account.tokenUri}|${cloudPlatformScope}`;
}

/**
 * After Vertex answered 401 to `request`: drops the service account's cached token that request carried, so the next
 * request exchanges a fresh one (a token given in the config is the operator's to replace).
 *
 * @example
 * dropRejectedVertexToken(rejectedRequest, deployment.target); // the next vertexAccessToken(target) fetches anew
 */
export function dropRejectedVertexToken(request: UpstreamRequest, target: UpstreamTarget): void {
  const options = readVertexOptions(target.options);
  const token = bearerTokenOf(request.headers);
  if (options.serviceAccount === undefined || token === undefined) return;
  const parsed = parseServiceAccount(options.serviceAccount);
  if (parsed.ok) invalidateSharedAccessToken(serviceAccountCacheKey(parsed.account), token);
}

/** The cached token of one service account, fetched (single-flight) when there is none or it is about to expire. */
function serviceAccountToken(
  account: VertexServiceAccount,
  dependencies: VertexCredentialDependencies,
): Promise<string> {
  const now = dependencies.now ?? Date.now;
  // The key names the identity only; the private key is not part of it (a rotated key keeps its cached token).
  const cache = sharedAccessTokenCache(serviceAccountCacheKey(account), {
    refreshMarginMs: vertexTokenRefreshMarginMs,
    now,
    fetchToken: async () => {
      const assertion = await signServiceAccountAssertion(account, cloudPlatformScope, now());
      return requestAccessToken({
        url: account.tokenUri,
        form: { grant_type: jwtBearerGrantType, assertion },
        provider: vertexProviderId,
        label: `Google OAuth (service account ${account.clientEmail})`,
        now,
        ...(dependencies.fetch === undefined ? {} : { fetch: dependencies.fetch }),
      });
    },
  });
  return cache.get();
}

function invalidCredentials(problem: string): GatewayError {
  return new GatewayError({
    status: 500,
    type: 'api_error',
    code: 'invalid_provider_options',
    provider: vertexProviderId,
    message: `The gateway's Vertex deployment cannot authenticate: ${problem}.`,
  });
}
