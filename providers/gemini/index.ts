export { geminiTranslator } from './gemini-translator.ts';
export {
  buildGeminiChatRequest,
  buildGeminiGenerateContentBody,
  buildGeminiHealthCheckRequest,
  defaultGeminiBaseURL,
  geminiHeaders,
  geminiModelPath,
} from './gemini-request.ts';
export type {
  GeminiFunctionCallingConfig,
  GeminiFunctionDeclaration,
  GeminiGenerateContentBody,
  GeminiGenerationConfig,
} from './gemini-request.ts';
export type { GeminiContent, GeminiConversation, GeminiRequestPart } from './gemini-request-contents.ts';
export { toGeminiConversation } from './gemini-request-contents.ts';
export { geminiOptionsSchema, readGeminiOptions, validateGeminiOptions } from './gemini-options.ts';
export type { GeminiOptions } from './gemini-options.ts';
export {
  toGeminiThinkingConfig,
  geminiThinkingBudgetByEffort,
  geminiThinkingLevelByEffort,
} from './gemini-thinking.ts';
export type { GeminiThinkingConfig } from './gemini-thinking.ts';
export { toGeminiJsonSchema, toGeminiParametersSchema } from './gemini-json-schema.ts';
export {
  decodeToolCallId,
  encodeToolCallId,
  generatedToolCallIdPrefix,
  skipThoughtSignatureValidator,
  thoughtSignatureSeparator,
} from './gemini-tool-call-id.ts';
export { parseGeminiChatResponse, unnamedGeminiModel } from './gemini-response.ts';
export { createGeminiChatStream, geminiChatStream } from './gemini-stream.ts';
export type { GeminiStreamState } from './gemini-stream.ts';
export { blockedPromptFinishReason, mapGeminiFinishReason } from './gemini-finish-reason.ts';
export { toCanonicalGeminiUsage } from './gemini-wire-response.ts';
export { createGoogleErrorMapper, geminiErrorMapper, mapGeminiError } from './gemini-error.ts';
export {
  buildGeminiBatchEmbedContentsBody,
  buildGeminiEmbeddingsRequest,
  parseGeminiEmbeddingsResponse,
} from './gemini-embeddings.ts';
export type { GeminiBatchEmbedContentsBody, GeminiEmbedContentRequest } from './gemini-embeddings.ts';
