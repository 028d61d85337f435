import * as z from 'zod/mini';
import type {
  CanonicalChatResponse,
  CanonicalChoice,
  CanonicalEmbeddingsResponse,
  CanonicalToolCall,
  CanonicalUsage,
} from '../../src/canonical/index.ts';
import {
  invalidOpenAICompatibleBody,
  isOpenAICompatibleErrorBody,
  mapOpenAICompatibleInBandError,
} from './openai-compatible-error.ts';
import { mapOpenAICompatibleFinishReason } from './openai-compatible-finish-reason.ts';
import { convertOpenAICompatibleUsage, openAICompatibleUsageSchema } from './openai-compatible-usage.ts';

/**
 * Message content as OpenAI-compatible servers send it: a string, null, or (Mistral's reasoning models) an array of
 * `{type:'text', text}` and `{type:'thinking', thinking:[{type:'text', text}]}` parts.
 */
export const openAICompatibleContentSchema = z.nullish(
  z.union([
    z.string(),
    z.array(
      z.looseObject({
        type: z.string(),
        text: z.nullish(z.string()),
        thinking: z.nullish(z.union([z.string(), z.array(z.looseObject({ text: z.nullish(z.string()) }))])),
      }),
    ),
  ]),
);

/** Tool call arguments: JSON text as OpenAI sends it, or an object from servers that send it parsed. */
export const openAICompatibleArgumentsSchema = z.nullish(z.union([z.string(), z.record(z.string(), z.unknown())]));

/** The arguments as JSON text; servers that send an object get it serialised. */
export function openAICompatibleArgumentsText(value: z.infer<typeof openAICompatibleArgumentsSchema>): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Splits message content into its answer text and its visible reasoning (Mistral `thinking` parts). */
export function readOpenAICompatibleContent(content: z.infer<typeof openAICompatibleContentSchema>): {
  text: string | undefined;
  reasoning: string | undefined;
} {
  if (content === null || content === undefined) return { text: undefined, reasoning: undefined };
  if (typeof content === 'string') return { text: content, reasoning: undefined };
  let text: string | undefined;
  let reasoning: string | undefined;
  for (const part of content) {
    if (part.type === 'text' && typeof part.text === 'string') text = (text ?? '') + part.text;
    if (part.type === 'thinking' && part.thinking !== null && part.thinking !== undefined) {
      const thinking =
        typeof part.thinking === 'string' ? part.thinking : part.thinking.map((inner) => inner.text ?? '').join('');
      reasoning = (reasoning ?? '') + thinking;
    }
  }
  return { text, reasoning };
}

/** A tool call id for the rare upstream that sends none; clients need one to answer the call. */
export function fallbackToolCallId(): string {
  return `call_${crypto.randomUUID().replaceAll('-', '')}`;
}

/** Unix seconds now: the `created` of a response whose upstream sent none. */
export function nowInSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** A non-streamed `chat.completion`: only the fields read, tolerant of what compatible servers omit. */
const chatCompletionSchema = z.object({
  id: z.nullish(z.string()),
  model: z.nullish(z.string()),
  created: z.nullish(z.number()),
  choices: z.array(
    z.object({
      index: z.nullish(z.number()),
      message: z.object({
        content: openAICompatibleContentSchema,
        refusal: z.nullish(z.string()),
        /** DeepSeek, vLLM (older), Qwen. */
        reasoning_content: z.nullish(z.string()),
        /** OpenRouter, Groq (`reasoning_format: parsed`), vLLM (newer). */
        reasoning: z.nullish(z.string()),
        tool_calls: z.nullish(
          z.array(
            z.object({
              id: z.nullish(z.string()),
              function: z.object({ name: z.string(), arguments: openAICompatibleArgumentsSchema }),
            }),
          ),
        ),
      }),
      finish_reason: z.nullish(z.string()),
      logprobs: z.optional(z.unknown()),
    }),
  ),
  usage: z.nullish(openAICompatibleUsageSchema),
  system_fingerprint: z.nullish(z.string()),
});

function nonEmpty(value: string | null | undefined): string | undefined {
  return value === null || value === undefined || value === '' ? undefined : value;
}

/**
 * Reads a non-streamed OpenAI-compatible chat completion. An error object in a 200 body becomes the mapped error;
 * a body of another shape is a 502. Missing `id`/`model` become `''`, a missing `created` the current time.
 *
 * @example
 * parseOpenAICompatibleChatResponse(await response.json()).choices[0]?.text;
 */
export function parseOpenAICompatibleChatResponse(body: unknown): CanonicalChatResponse {
  if (isOpenAICompatibleErrorBody(body)) throw mapOpenAICompatibleInBandError(body);
  const parsed = chatCompletionSchema.safeParse(body);
  if (!parsed.success) throw invalidOpenAICompatibleBody('chat completion', parsed.error.issues, body);
  const completion = parsed.data;
  const choices = completion.choices.map((choice, position): CanonicalChoice => {
    const message = choice.message;
    const content = readOpenAICompatibleContent(message.content);
    const toolCalls = (message.tool_calls ?? []).map((call): CanonicalToolCall => ({
      id: nonEmpty(call.id) ?? fallbackToolCallId(),
      name: call.function.name,
      arguments: openAICompatibleArgumentsText(call.function.arguments),
    }));
    const canonical: CanonicalChoice = {
      index: choice.index ?? position,
      text: content.text ?? null,
      toolCalls,
      finishReason: mapOpenAICompatibleFinishReason(choice.finish_reason, toolCalls.length > 0),
    };
    const reasoning = nonEmpty(message.reasoning_content) ?? nonEmpty(message.reasoning) ?? content.reasoning;
    if (reasoning !== undefined) canonical.reasoning = reasoning;
    if (typeof message.refusal === 'string') canonical.refusal = message.refusal;
    if (choice.logprobs !== null && choice.logprobs !== undefined) canonical.logprobs = choice.logprobs;
    return canonical;
  });
  const response: CanonicalChatResponse = {
    id: completion.id ?? '',
    model: completion.model ?? '',
    created: completion.created ?? nowInSeconds(),
    choices,
    usage:
      completion.usage === null || completion.usage === undefined
        ? undefined
        : convertOpenAICompatibleUsage(completion.usage),
  };
  if (completion.system_fingerprint !== undefined) response.systemFingerprint = completion.system_fingerprint;
  return response;
}

/** An embeddings response: only the fields read. */
const embeddingsResponseSchema = z.object({
  model: z.nullish(z.string()),
  data: z.array(z.object({ index: z.nullish(z.number()), embedding: z.union([z.array(z.number()), z.string()]) })),
  usage: z.nullish(openAICompatibleUsageSchema),
});

/**
 * Reads an OpenAI-compatible embeddings response. Embeddings produce no output tokens: `outputTokens` is 0 and the
 * total is the upstream's `total_tokens` (or the prompt tokens).
 *
 * @example
 * parseOpenAICompatibleEmbeddingsResponse(await response.json()).data[0]?.embedding;
 */
export function parseOpenAICompatibleEmbeddingsResponse(body: unknown): CanonicalEmbeddingsResponse {
  if (isOpenAICompatibleErrorBody(body)) throw mapOpenAICompatibleInBandError(body);
  const parsed = embeddingsResponseSchema.safeParse(body);
  if (!parsed.success) throw invalidOpenAICompatibleBody('embeddings response', parsed.error.issues, body);
  const { model, data, usage } = parsed.data;
  let canonicalUsage: CanonicalUsage | undefined;
  if (usage !== null && usage !== undefined) {
    const inputTokens = usage.prompt_tokens ?? 0;
    canonicalUsage = { inputTokens, outputTokens: 0, totalTokens: usage.total_tokens ?? inputTokens, raw: usage };
  }
  return {
    model: model ?? '',
    data: data.map((item, position) => ({ index: item.index ?? position, embedding: item.embedding })),
    usage: canonicalUsage,
  };
}
