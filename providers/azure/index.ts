export { azureOpenAITranslator } from './azure-translator.ts';
export {
  azureOpenAIProviderId,
  azureV1APIVersion,
  defaultAzureAuthorityHost,
  defaultAzureTokenScope,
  readAzureOptions,
  validateAzureOptions,
  type AzureAuthentication,
  type AzureClientCredentials,
  type AzureOptions,
} from './azure-options.ts';
export {
  azureResourceEndpoint,
  buildAzureChatRequest,
  buildAzureEmbeddingsRequest,
  buildAzureHealthCheckRequest,
  buildAzureNativeRequest,
} from './azure-request.ts';
export { azureAuthenticationHeaders, azureClientCredentialsTokenCache } from './azure-authentication.ts';
export {
  azureOpenAIChatStream,
  parseAzureOpenAIChatResponse,
  parseAzureOpenAIEmbeddingsResponse,
} from './azure-response.ts';
export { mapAzureOpenAIError, mapAzureOpenAIInBandError } from './azure-error.ts';
