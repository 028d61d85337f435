export { anthropicTranslator } from './anthropic-translator.ts';
export {
  buildAnthropicChatRequest,
  anthropicOptionsSchema,
  defaultAnthropicMaxTokens,
  defaultAnthropicVersion,
} from './anthropic-request.ts';
export type {
  AnthropicMessagesRequestBody,
  AnthropicOptions,
  AnthropicTool,
  AnthropicToolChoice,
} from './anthropic-request.ts';
export { parseAnthropicChatResponse } from './anthropic-response.ts';
export { anthropicChatStream } from './anthropic-stream.ts';
export type { AnthropicStreamState } from './anthropic-stream.ts';
export { mapAnthropicError, mapAnthropicStreamError } from './anthropic-error.ts';
export { jsonResponseToolName } from './anthropic-json-response.ts';
