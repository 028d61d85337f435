import * as z from 'zod/mini';
import type { CanonicalChatResponse, CanonicalToolCall } from '../../src/canonical/index.ts';
import { invalidCohereBody, invalidFields } from './cohere-error.ts';
import { mapCohereFinishReason } from './cohere-finish-reason.ts';
import { cohereUsageSchema, toCanonicalCohereUsage } from './cohere-usage.ts';

/** A tool call of a Cohere v2 assistant message, as read from responses and streams. */
export const cohereToolCallSchema = z.object({
  id: z.string(),
  function: z.object({ name: z.string(), arguments: z.nullish(z.string()) }),
});

/** A non-streamed Cohere v2 chat response, minimal and tolerant: only the fields the gateway reads. */
const cohereChatResponseSchema = z.object({
  id: z.string(),
  finish_reason: z.nullish(z.string()),
  message: z.object({
    content: z.nullish(
      z.array(z.object({ type: z.string(), text: z.nullish(z.string()), thinking: z.nullish(z.string()) })),
    ),
    tool_calls: z.nullish(z.array(cohereToolCallSchema)),
    tool_plan: z.nullish(z.string()),
  }),
  usage: z.nullish(cohereUsageSchema),
});

/**
 * Reads a successful, non-streamed Cohere v2 chat response into one canonical choice:
 * - the text is the `tool_plan` (the model's plan, written before its tool calls: what OpenAI and Anthropic models
 *   say as text beside tool calls) followed by the `text` content blocks; null when there is none;
 * - `thinking` content blocks (reasoning models) become `reasoning`;
 * - `tool_calls` become tool calls, arguments as Cohere sent them (`{}` when empty); `citations` are not carried;
 * - `model` is empty: Cohere's answers do not name the model, and the seam gives the parser no target, so the
 *   renderers fall back to the model the gateway called (see the translator's notes);
 * - usage from `billed_units`, see `toCanonicalCohereUsage`.
 * A body that is not a chat response is a 502 `upstream_invalid_response`.
 *
 * @example
 * parseCohereChatResponse(await response.json()).choices[0]?.finishReason; // { unified: 'stop', raw: 'COMPLETE' }
 */
export function parseCohereChatResponse(body: unknown): CanonicalChatResponse {
  const parsed = cohereChatResponseSchema.safeParse(body);
  if (!parsed.success) throw invalidCohereBody('a chat response', invalidFields(parsed.error.issues), body);
  const { id, finish_reason: finishReason, message, usage } = parsed.data;
  const texts: string[] = [];
  const reasoning: string[] = [];
  if (typeof message.tool_plan === 'string' && message.tool_plan.length > 0) texts.push(message.tool_plan);
  for (const block of message.content ?? []) {
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block.type === 'thinking' && typeof block.thinking === 'string') reasoning.push(block.thinking);
  }
  const toolCalls: CanonicalToolCall[] = (message.tool_calls ?? []).map((call) => {
    const argumentsText = call.function.arguments ?? '';
    return { id: call.id, name: call.function.name, arguments: argumentsText.length > 0 ? argumentsText : '{}' };
  });
  const text = texts.join('');
  return {
    id,
    model: '',
    created: Math.floor(Date.now() / 1000),
    choices: [
      {
        index: 0,
        text: text.length > 0 ? text : null,
        ...(reasoning.length > 0 ? { reasoning: reasoning.join('') } : {}),
        toolCalls,
        finishReason: mapCohereFinishReason(finishReason),
      },
    ],
    usage:
      usage === null || usage === undefined
        ? undefined
        : toCanonicalCohereUsage(usage, (body as { usage: unknown }).usage),
  };
}
