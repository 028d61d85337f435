export { bedrockTranslator } from './bedrock-translator.ts';
export { buildBedrockChatRequest, bedrockModelURL, defaultBedrockReasoningMaxTokens } from './bedrock-request.ts';
export type { BedrockConverseRequestBody, BedrockTool, BedrockToolChoice } from './bedrock-request.ts';
export { bedrockBaseURL, bedrockOptionsSchema, validateBedrockOptions } from './bedrock-options.ts';
export type { BedrockCredentials, BedrockOptions } from './bedrock-options.ts';
export { authorizeBedrockRequest, bedrockSigningService } from './bedrock-signing.ts';
export { parseBedrockChatResponse } from './bedrock-response.ts';
export { bedrockChatStream } from './bedrock-stream.ts';
export type { BedrockStreamState } from './bedrock-stream.ts';
export { bedrockErrorMapper, mapBedrockError } from './bedrock-error.ts';
export {
  bedrockEmbeddingFamily,
  buildBedrockEmbeddingsRequest,
  parseBedrockEmbeddingsResponse,
} from './bedrock-embeddings.ts';
export { bedrockAnthropicTranslator } from './bedrock-anthropic-translator.ts';
export {
  bedrockAnthropicVersion,
  buildBedrockAnthropicChatRequest,
  buildBedrockAnthropicNativeRequest,
  toBedrockAnthropicBody,
} from './bedrock-anthropic-request.ts';
