import type { CanonicalChatResponse, CanonicalChoice, CanonicalToolCall } from '../../src/canonical/index.ts';
import { blockedPromptFinishReason, mapGeminiFinishReason } from './gemini-finish-reason.ts';
import { encodeToolCallId } from './gemini-tool-call-id.ts';
import {
  geminiGenerateContentResponseSchema,
  invalidFields,
  invalidGeminiResponse,
  toCanonicalGeminiUsage,
  type GeminiGenerateContentResponse,
} from './gemini-wire-response.ts';

/** The model name answered when Gemini's response names none (`modelVersion` is optional). */
export const unnamedGeminiModel = 'gemini';

/**
 * Reads a successful, non-streamed Gemini `generateContent` response (the Gemini API's or Vertex AI's; `provider`
 * names the one in errors) into canonical choices, one per candidate:
 * - text parts are concatenated into the text (null when there is none); parts marked `thought: true` are reasoning
 *   instead, and a thought part's `thoughtSignature` is the reasoning signature;
 * - `functionCall` parts become tool calls, several in one turn kept in order; `arguments` is `JSON.stringify(args)`,
 *   and the id is Gemini's or a generated one, with the part's thought signature encoded in it (see
 *   `gemini-tool-call-id.ts`);
 * - the signatures Gemini puts on text parts are not kept: the canonical request has no place to send them back
 *   (reasoning is not part of a canonical assistant message), and Google validates only function-call signatures;
 * - `finishReason` per `mapGeminiFinishReason` (a turn of function calls is `tool-calls`);
 * - a prompt Gemini blocked (`promptFeedback.blockReason`, no candidates) is one empty choice finished by
 *   `content-filter` (see `blockedPromptFinishReason`);
 * - `usageMetadata` per `toCanonicalGeminiUsage`; the id is `responseId`, the model `modelVersion`.
 *
 * A body that is not a GenerateContentResponse, or one with neither candidates nor a block reason, is a 502
 * `upstream_invalid_response`.
 *
 * @example
 * const response = parseGeminiChatResponse(await upstreamResponse.json());
 * response.choices[0].finishReason; // { unified: 'stop', raw: 'STOP' }
 */
export function parseGeminiChatResponse(body: unknown, provider = 'gemini'): CanonicalChatResponse {
  const parsed = geminiGenerateContentResponseSchema.safeParse(body);
  if (!parsed.success) {
    throw invalidGeminiResponse(
      provider,
      `Gemini sent a response the gateway cannot read (invalid: ${invalidFields(parsed.error)}).`,
      body,
    );
  }
  const response = parsed.data;
  const candidates = response.candidates ?? [];
  const blockReason = response.promptFeedback?.blockReason ?? undefined;
  let choices: CanonicalChoice[];
  if (candidates.length > 0) {
    choices = candidates.map((candidate, position) => toChoice(response, candidate, position));
  } else if (blockReason !== undefined) {
    choices = [{ index: 0, text: null, toolCalls: [], finishReason: blockedPromptFinishReason(blockReason) }];
  } else {
    throw invalidGeminiResponse(provider, 'Gemini sent a response without candidates or a block reason.', body);
  }
  return {
    id: response.responseId ?? `gemini-${crypto.randomUUID()}`,
    model: response.modelVersion ?? unnamedGeminiModel,
    created: Math.floor(Date.now() / 1000),
    choices,
    usage:
      response.usageMetadata === null || response.usageMetadata === undefined
        ? undefined
        : toCanonicalGeminiUsage(response.usageMetadata, (body as { usageMetadata: unknown }).usageMetadata),
  };
}

type GeminiCandidate = NonNullable<GeminiGenerateContentResponse['candidates']>[number];

function toChoice(
  response: GeminiGenerateContentResponse,
  candidate: GeminiCandidate,
  position: number,
): CanonicalChoice {
  const index = candidate.index ?? position;
  const texts: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: CanonicalToolCall[] = [];
  let reasoningSignature: string | undefined;
  for (const part of candidate.content?.parts ?? []) {
    const signature = part.thoughtSignature ?? undefined;
    if (part.functionCall !== null && part.functionCall !== undefined) {
      toolCalls.push({
        id: encodeToolCallId({
          geminiId: part.functionCall.id ?? undefined,
          responseId: response.responseId ?? undefined,
          candidateIndex: index,
          callIndex: toolCalls.length,
          thoughtSignature: signature,
        }),
        name: part.functionCall.name,
        arguments: JSON.stringify(part.functionCall.args ?? {}),
      });
    } else if (part.thought === true) {
      if (typeof part.text === 'string') reasoning.push(part.text);
      if (signature !== undefined && signature.length > 0) reasoningSignature = signature;
    } else if (typeof part.text === 'string') {
      texts.push(part.text);
    }
  }
  const text = texts.join('');
  return {
    index,
    text: text.length > 0 ? text : null,
    ...(reasoning.length > 0 ? { reasoning: reasoning.join('') } : {}),
    ...(reasoningSignature !== undefined && reasoning.length > 0 ? { reasoningSignature } : {}),
    toolCalls,
    finishReason: mapGeminiFinishReason(candidate.finishReason ?? undefined, toolCalls.length > 0),
  };
}
