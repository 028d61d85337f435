export { vertexGeminiTranslator, vertexGeminiChatStream } from './vertex-gemini-translator.ts';
export { vertexAnthropicTranslator, vertexAnthropicChatStream } from './vertex-anthropic-translator.ts';
export {
  buildVertexGeminiChatRequest,
  isVertexAnthropicModel,
  validateVertexGeminiOptions,
} from './vertex-gemini-request.ts';
export type { VertexGenerateContentBody } from './vertex-gemini-request.ts';
export {
  buildVertexAnthropicChatRequest,
  buildVertexAnthropicNativeRequest,
  buildVertexAnthropicNativeRequestWithCredentials,
  defaultVertexAnthropicVersion,
} from './vertex-anthropic-request.ts';
export { buildVertexEmbeddingsRequest, parseVertexEmbeddingsResponse } from './vertex-embeddings.ts';
export type { VertexEmbeddingsRequestBody } from './vertex-embeddings.ts';
export { mapVertexError, vertexErrorMapper } from './vertex-error.ts';
export {
  readVertexOptions,
  validateVertexOptions,
  vertexEmbeddingTaskTypes,
  vertexOptionsSchema,
  vertexProviderId,
} from './vertex-options.ts';
export type { VertexOptions } from './vertex-options.ts';
export { jwtBearerGrantType, vertexAccessToken, vertexTokenRefreshMarginMs } from './vertex-credentials.ts';
export type { VertexCredentialDependencies } from './vertex-credentials.ts';
export { cloudPlatformScope, signServiceAccountAssertion } from './vertex-jwt.ts';
export { defaultGoogleTokenUri, parseServiceAccount } from './vertex-service-account.ts';
export type { VertexServiceAccount } from './vertex-service-account.ts';
export { vertexDefaultBaseURL, vertexHost, vertexModelUrl } from './vertex-url.ts';
