import * as z from 'zod/mini';
import type { CanonicalChatResponse, CanonicalToolCall } from '../../src/canonical/index.ts';
import { mapAnthropicFinishReason } from './anthropic-finish-reason.ts';
import { jsonResponseToolName } from './anthropic-json-response.ts';
import { anthropicUsageSchema, toCanonicalUsage } from '../../src/canonical/wire/anthropic-wire-usage.ts';
import { unreadableUpstreamBody } from '../../src/errors/unreadable-upstream-body.ts';

/** A content block of an Anthropic response: only the fields the gateway reads, for every block type it reads. */
const anthropicResponseBlockSchema = z.object({
  type: z.string(),
  text: z.nullish(z.string()),
  thinking: z.nullish(z.string()),
  signature: z.nullish(z.string()),
  id: z.nullish(z.string()),
  name: z.nullish(z.string()),
  input: z.optional(z.unknown()),
});

/** A non-streamed Anthropic Messages response, minimal and tolerant. */
const anthropicMessageSchema = z.object({
  id: z.string(),
  model: z.string(),
  content: z.array(anthropicResponseBlockSchema),
  stop_reason: z.nullish(z.string()),
  usage: z.nullish(anthropicUsageSchema),
});

/**
 * Reads a successful, non-streamed Anthropic Messages response into one canonical choice:
 * `text` blocks are concatenated (Anthropic splits text around citations; null when there is none), `thinking`
 * blocks become `reasoning` (with the signature, which clients must send back unchanged), `tool_use` blocks become tool calls with `arguments = JSON.stringify(input)`, and a call
 * of the gateway's JSON response tool becomes the text itself (see `anthropic-json-response.ts`). Block types the
 * gateway does not translate (`redacted_thinking`, server tool blocks) are skipped. A body that is not a Messages
 * response is a 502 `upstream_invalid_response`.
 */
export function parseAnthropicChatResponse(body: unknown): CanonicalChatResponse {
  const parsed = anthropicMessageSchema.safeParse(body);
  if (!parsed.success) {
    throw unreadableUpstreamBody('anthropic', 'Anthropic sent a response', parsed.error.issues, body);
  }
  const message = parsed.data;
  const texts: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: CanonicalToolCall[] = [];
  let answeredWithJsonTool = false;
  let signature: string | undefined;
  for (const block of message.content) {
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block.type === 'thinking' && typeof block.thinking === 'string') {
      reasoning.push(block.thinking);
      signature = block.signature ?? undefined;
    } else if (block.type === 'tool_use' && block.name === jsonResponseToolName) {
      answeredWithJsonTool = true;
      texts.push(JSON.stringify(block.input ?? {}));
    } else if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
      toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
    }
  }
  return {
    id: message.id,
    model: message.model,
    created: Math.floor(Date.now() / 1000),
    choices: [
      {
        index: 0,
        text: texts.length > 0 ? texts.join('') : null,
        ...(reasoning.length > 0 ? { reasoning: reasoning.join('') } : {}),
        // One thinking block is the usual answer; with several, the last one's signature is kept.
        ...(signature !== undefined && signature.length > 0 ? { reasoningSignature: signature } : {}),
        toolCalls,
        finishReason: mapAnthropicFinishReason(message.stop_reason, answeredWithJsonTool && toolCalls.length === 0),
      },
    ],
    usage:
      message.usage === null || message.usage === undefined
        ? undefined
        : toCanonicalUsage(message.usage, (body as { usage: unknown }).usage),
  };
}
