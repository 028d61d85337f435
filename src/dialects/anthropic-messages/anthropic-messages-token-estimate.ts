import { estimatePdfTokens, imageTokenEstimate } from '../../tokens/media-token-estimate.ts';

/**
 * The gateway's own estimate of a Messages request's input tokens, for `count_tokens` when the model's deployment
 * cannot count (a non-Anthropic provider) or could not be reached. It is an estimate, documented as one: about four
 * characters of text a token (the usual figure for English and code with BPE tokenizers), tool definitions as their
 * JSON text, 1,600 tokens an image (Anthropic's figure for a large image, width x height / 750 capped near 1.15
 * megapixels), about 1,500 tokens a PDF page (counted from its base64 size: roughly 3 KB of PDF a page of text), and
 * a few tokens of framing per message. Thinking signatures and redacted thinking count nothing (the upstream strips
 * them from the prompt).
 */
export function estimateAnthropicInputTokens(body: Record<string, unknown>): number {
  let characters = 0;
  let tokens = 0;
  const visit = (value: unknown, depth: number): void => {
    if (depth > 64) return;
    if (typeof value === 'string') {
      characters += value.length;
      return;
    }
    if (Array.isArray(value)) {
      for (const item of value) visit(item, depth + 1);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    const block = value as Record<string, unknown>;
    switch (block.type) {
      case 'image':
        tokens += imageTokenEstimate;
        return;
      case 'document':
        tokens += documentTokens(block.source);
        if (typeof block.title === 'string') characters += block.title.length;
        return;
      case 'redacted_thinking':
        return;
      case 'thinking':
        if (typeof block.thinking === 'string') characters += block.thinking.length;
        return;
    }
    for (const [key, item] of Object.entries(block)) {
      if (key === 'cache_control' || key === 'type' || key === 'id' || key === 'tool_use_id') continue;
      visit(item, depth + 1);
    }
  };
  visit(body.system, 0);
  const messages = Array.isArray(body.messages) ? body.messages : [];
  tokens += messages.length * messageFramingTokens;
  visit(messages, 0);
  if (Array.isArray(body.tools) && body.tools.length > 0) {
    characters += JSON.stringify(body.tools).length;
    tokens += toolsPreambleTokens;
  }
  return Math.max(1, tokens + Math.ceil(characters / charactersPerToken));
}

const charactersPerToken = 4;
const messageFramingTokens = 4;
/** Anthropic adds a tool-use system prompt of a few hundred tokens when a request has tools. */
const toolsPreambleTokens = 300;

function documentTokens(source: unknown): number {
  if (typeof source !== 'object' || source === null) return 0;
  const { type, data } = source as Record<string, unknown>;
  if (typeof data !== 'string') return type === 'url' ? estimatePdfTokens(undefined) : 0;
  if (type === 'text') return Math.ceil(data.length / charactersPerToken);
  return estimatePdfTokens(data);
}
