import * as z from 'zod/mini';
import type { CanonicalChatResponse, CanonicalToolCall } from '../../src/canonical/index.ts';
import { jsonResponseToolName } from '../anthropic/anthropic-json-response.ts';
import { mapBedrockFinishReason } from './bedrock-finish-reason.ts';
import { bedrockUsageSchema, toCanonicalBedrockUsage } from './bedrock-usage.ts';
import { unreadableUpstreamBody } from '../../src/errors/unreadable-upstream-body.ts';

/** A content block of a Converse response: only the members the gateway reads. */
const bedrockResponseBlockSchema = z.object({
  text: z.nullish(z.string()),
  toolUse: z.nullish(z.object({ toolUseId: z.string(), name: z.string(), input: z.optional(z.unknown()) })),
  reasoningContent: z.nullish(
    z.object({
      reasoningText: z.nullish(z.object({ text: z.nullish(z.string()), signature: z.nullish(z.string()) })),
    }),
  ),
});

/** A non-streamed Converse response, minimal and tolerant. */
const bedrockConverseResponseSchema = z.object({
  output: z.object({
    message: z.object({ role: z.nullish(z.string()), content: z.array(bedrockResponseBlockSchema) }),
  }),
  stopReason: z.nullish(z.string()),
  usage: z.nullish(bedrockUsageSchema),
});

/**
 * The id of a Bedrock answer. Converse sends none in its body or stream (the request id is the `x-amzn-requestid`
 * header, which translators do not see), so the gateway makes one: `bedrock-` and a random UUID, fresh per answer (a
 * stream keeps the one its `response-start` carried).
 */
export function newBedrockResponseId(): string {
  return `bedrock-${crypto.randomUUID()}`;
}

/**
 * Reads a successful, non-streamed Converse response into one canonical choice: `text` blocks are concatenated (null
 * when there is none), `reasoningContent.reasoningText` becomes `reasoning` with its signature (which clients send
 * back unchanged), `toolUse` blocks become tool calls with `arguments = JSON.stringify(input)`, and a call of the
 * gateway's JSON response tool becomes the text itself. Other blocks (`redactedContent`, citations, images) are
 * skipped. The body names no model (it is in the request's URL): `model` is `''`, which the pipeline fills with the
 * deployment's model; the id is made, see {@link newBedrockResponseId}. A body that is not a Converse response is a
 * 502 `upstream_invalid_response`.
 *
 * @example
 * parseBedrockChatResponse({ output: { message: { role: 'assistant', content: [{ text: 'Hi' }] } }, stopReason: 'end_turn' });
 * // { id: 'bedrock-…', model: '', choices: [{ text: 'Hi', finishReason: { unified: 'stop', raw: 'end_turn' }, ... }], ... }
 */
export function parseBedrockChatResponse(body: unknown): CanonicalChatResponse {
  const parsed = bedrockConverseResponseSchema.safeParse(body);
  if (!parsed.success) {
    throw unreadableUpstreamBody('bedrock', 'Bedrock sent a response', parsed.error.issues, body);
  }
  const response = parsed.data;
  const texts: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: CanonicalToolCall[] = [];
  let answeredWithJsonTool = false;
  let signature: string | undefined;
  for (const block of response.output.message.content) {
    if (typeof block.text === 'string') texts.push(block.text);
    else if (block.reasoningContent?.reasoningText !== null && block.reasoningContent?.reasoningText !== undefined) {
      const reasoningText = block.reasoningContent.reasoningText;
      if (typeof reasoningText.text === 'string') reasoning.push(reasoningText.text);
      if (typeof reasoningText.signature === 'string' && reasoningText.signature.length > 0)
        signature = reasoningText.signature;
    } else if (block.toolUse !== null && block.toolUse !== undefined) {
      const input = JSON.stringify(block.toolUse.input ?? {});
      if (block.toolUse.name === jsonResponseToolName) {
        answeredWithJsonTool = true;
        texts.push(input);
      } else toolCalls.push({ id: block.toolUse.toolUseId, name: block.toolUse.name, arguments: input });
    }
  }
  const usage = response.usage;
  return {
    id: newBedrockResponseId(),
    model: '',
    created: Math.floor(Date.now() / 1000),
    choices: [
      {
        index: 0,
        text: texts.length > 0 ? texts.join('') : null,
        ...(reasoning.length > 0 ? { reasoning: reasoning.join('') } : {}),
        // One reasoning block is the usual answer; with several, the last signature is kept.
        ...(signature === undefined ? {} : { reasoningSignature: signature }),
        toolCalls,
        finishReason: mapBedrockFinishReason(response.stopReason, answeredWithJsonTool && toolCalls.length === 0),
      },
    ],
    usage:
      usage === null || usage === undefined
        ? undefined
        : toCanonicalBedrockUsage(usage, (body as { usage: unknown }).usage),
  };
}
