import type { CanonicalChatRequest, CanonicalContentPart } from '../canonical/canonical-chat-request.ts';
import { estimatePdfTokens, imageTokenEstimate } from './media-token-estimate.ts';
import type { Tokenizer } from './token-counter.ts';

/** OpenAI's chat framing (`<|start|>{role}\n{content}<|end|>\n`): three tokens a message beside its role and content. */
const tokensPerMessage = 3;
/** A message's `name` costs one token beside its own. */
const tokensPerName = 1;
/** Every reply is primed with `<|start|>assistant<|message|>`. */
const replyPrimingTokens = 3;

/**
 * The input tokens of a canonical chat request as an OpenAI-shaped upstream sees it, counted with `tokenizer`: the
 * framing of OpenAI's cookbook "How to count tokens with tiktoken" (3 tokens a message, its role and content encoded,
 * 1 more for a `name`, 3 for priming the reply), each message's text, each assistant tool call's name and JSON
 * arguments, and each tool definition's name, description and JSON schema (as JSON text), likewise a JSON-schema
 * response format's name and schema. The texts are counted exactly; how OpenAI renders tool definitions and calls
 * internally is not public, so those few tokens of wrapping are not counted. Images (1,600 tokens each) and files
 * (counted as PDFs from their size) are what no tokenizer sees: they count as the gateway's estimate counts them.
 *
 * @example
 * const tokens = countChatTokens(anthropicMessagesToCanonical(request), await counter.tokenizerFor('gpt-4o'));
 */
export function countChatTokens(request: CanonicalChatRequest, tokenizer: Tokenizer): number {
  const count = (text: string): number => (text.length === 0 ? 0 : tokenizer.countTokens(text));
  let tokens = replyPrimingTokens;
  for (const message of request.messages) {
    tokens += tokensPerMessage + count(message.role);
    switch (message.role) {
      case 'system':
      case 'tool':
        tokens += count(message.content);
        break;
      case 'user':
      case 'assistant':
        for (const part of message.content) tokens += partTokens(part, count);
        if (message.name !== undefined) tokens += tokensPerName + count(message.name);
        if (message.role === 'assistant')
          for (const call of message.toolCalls) tokens += count(call.name) + count(call.arguments);
        break;
    }
  }
  for (const tool of request.tools ?? [])
    tokens += count(tool.name) + count(tool.description ?? '') + count(JSON.stringify(tool.parameters));
  const format = request.responseFormat;
  if (format?.type === 'json_schema')
    tokens += count(format.name) + count(format.description ?? '') + count(JSON.stringify(format.schema));
  return tokens;
}

function partTokens(part: CanonicalContentPart, count: (text: string) => number): number {
  switch (part.type) {
    case 'text':
      return count(part.text);
    case 'image':
      return imageTokenEstimate;
    case 'file':
      return estimatePdfTokens(part.data);
  }
}
