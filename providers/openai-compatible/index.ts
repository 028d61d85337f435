export { openAICompatibleTranslator } from './openai-compatible-translator.ts';
export { openAICompatiblePresets } from './openai-compatible-presets.ts';
export {
  buildOpenAICompatibleChatRequest,
  buildOpenAICompatibleEmbeddingsRequest,
  openAICompatibleHeaders,
  readOpenAICompatibleOptions,
  type OpenAICompatibleOptions,
} from './openai-compatible-request.ts';
export {
  parseOpenAICompatibleChatResponse,
  parseOpenAICompatibleEmbeddingsResponse,
} from './openai-compatible-response.ts';
export { openAICompatibleChatStream, type OpenAICompatibleStreamState } from './openai-compatible-stream.ts';
export {
  mapOpenAICompatibleError,
  mapOpenAICompatibleInBandError,
  openAICompatibleProviderId,
} from './openai-compatible-error.ts';
export { mapOpenAICompatibleFinishReason } from './openai-compatible-finish-reason.ts';
export {
  convertOpenAICompatibleUsage,
  openAICompatibleUsageSchema,
  type OpenAICompatibleUsage,
} from './openai-compatible-usage.ts';
