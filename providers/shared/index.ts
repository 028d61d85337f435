export {
  accessTokenFailureBackoffMs,
  createAccessTokenCache,
  sharedAccessTokenCache,
  sharedAccessTokenCacheLimit,
  type AccessToken,
  type AccessTokenCache,
  type AccessTokenCacheOptions,
} from './access-token-cache.ts';
export { requestAccessToken, tokenEndpointTimeoutMs, type TokenEndpointRequest } from './token-endpoint.ts';
