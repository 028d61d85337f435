import * as z from 'zod/mini';
import type {
  CanonicalEmbeddingsRequest,
  CanonicalEmbeddingsResponse,
  UpstreamRequest,
  UpstreamTarget,
} from '../../src/canonical/index.ts';
import { invalidRequest } from '../../src/errors.ts';
import { readGeminiOptions } from './gemini-options.ts';
import { geminiHeaders, geminiModelPath } from './gemini-request.ts';
import { invalidFields, invalidGeminiResponse } from './gemini-wire-response.ts';

/** One request of `batchEmbedContents`. */
export interface GeminiEmbedContentRequest {
  model: string;
  content: { parts: [{ text: string }] };
  outputDimensionality?: number;
  taskType?: string;
}

/** The body of `models/{model}:batchEmbedContents`. */
export interface GeminiBatchEmbedContentsBody {
  requests: GeminiEmbedContentRequest[];
}

/**
 * Builds the `batchEmbedContents` body of a canonical embeddings request, without URL or credentials: one request
 * per input text, each naming the model (`models/<model>`, as Google requires it to match the URL's), with
 * `dimensions` as `outputDimensionality` and the deployment's `embeddingTaskType` option as `taskType`. Token arrays
 * cannot be expressed (Gemini embeds text only): a 400 naming `input`. `user` is dropped.
 *
 * @example
 * buildGeminiBatchEmbedContentsBody({ model: 'embed', input: ['hello'], dimensions: 768 }, 'gemini-embedding-001');
 * // { requests: [{ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'hello' }] }, outputDimensionality: 768 }] }
 */
export function buildGeminiBatchEmbedContentsBody(
  request: CanonicalEmbeddingsRequest,
  model: string,
  taskType?: string,
): GeminiBatchEmbedContentsBody {
  const modelPath = geminiModelPath(model);
  const requests = request.input.map((input, index): GeminiEmbedContentRequest => {
    if (typeof input !== 'string') {
      throw invalidRequest('Gemini embeds text only; token arrays cannot be sent to it.', `input.[${index}]`);
    }
    const embedRequest: GeminiEmbedContentRequest = { model: modelPath, content: { parts: [{ text: input }] } };
    if (request.dimensions !== undefined) embedRequest.outputDimensionality = request.dimensions;
    if (taskType !== undefined) embedRequest.taskType = taskType;
    return embedRequest;
  });
  return { requests };
}

/**
 * Builds the Gemini API embeddings request: `POST {baseURL}/models/{model}:batchEmbedContents` with the key header.
 *
 * @example
 * buildGeminiEmbeddingsRequest({ model: 'embed', input: ['hello'] }, target).url;
 * // 'https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents'
 */
export function buildGeminiEmbeddingsRequest(
  request: CanonicalEmbeddingsRequest,
  target: UpstreamTarget,
): UpstreamRequest {
  const options = readGeminiOptions(target.options, target.providerName);
  const body = buildGeminiBatchEmbedContentsBody(request, target.model, options.embeddingTaskType);
  return {
    url: `${target.baseURL}/${geminiModelPath(target.model)}:batchEmbedContents`,
    method: 'POST',
    headers: geminiHeaders(target),
    body: JSON.stringify(body),
  };
}

const geminiBatchEmbedContentsResponseSchema = z.object({
  embeddings: z.array(z.object({ values: z.array(z.number()) })),
  usageMetadata: z.nullish(z.object({ promptTokenCount: z.nullish(z.number()) })),
});

/**
 * Reads a `batchEmbedContents` response (`{embeddings: [{values}]}`, in input order) into canonical embeddings, as
 * float arrays. The Gemini API reports no token usage for embeddings, so `usage` is undefined (not an invented
 * zero); should a `usageMetadata.promptTokenCount` come, it is used. The model is not in the response; it is the
 * one the request named, which the caller knows, so `model` is passed in (the translator passes an empty string and
 * the gateway answers with the client's model group). A malformed body is a 502 `upstream_invalid_response`.
 *
 * @example
 * parseGeminiEmbeddingsResponse({ embeddings: [{ values: [0.1, 0.2] }] });
 * // { model: '', data: [{ index: 0, embedding: [0.1, 0.2] }], usage: undefined }
 */
export function parseGeminiEmbeddingsResponse(
  body: unknown,
  provider = 'gemini',
  model = '',
): CanonicalEmbeddingsResponse {
  const parsed = geminiBatchEmbedContentsResponseSchema.safeParse(body);
  if (!parsed.success) {
    throw invalidGeminiResponse(
      provider,
      `Gemini sent an embeddings response the gateway cannot read (invalid: ${invalidFields(parsed.error)}).`,
      body,
    );
  }
  const promptTokens = parsed.data.usageMetadata?.promptTokenCount ?? undefined;
  return {
    model,
    data: parsed.data.embeddings.map((embedding, index) => ({ index, embedding: embedding.values })),
    usage:
      promptTokens === undefined
        ? undefined
        : { inputTokens: promptTokens, outputTokens: 0, totalTokens: promptTokens, raw: parsed.data.usageMetadata },
  };
}
