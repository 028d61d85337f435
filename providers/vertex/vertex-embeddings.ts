import * as z from 'zod/mini';
import type {
  CanonicalEmbeddingsRequest,
  CanonicalEmbeddingsResponse,
  UpstreamRequest,
  UpstreamTarget,
} from '../../src/canonical/index.ts';
import { invalidRequest } from '../../src/errors.ts';
import { vertexAccessToken, type VertexCredentialDependencies } from './vertex-credentials.ts';
import { readVertexOptions, vertexProviderId } from './vertex-options.ts';
import { vertexHeaders, vertexModelUrl } from './vertex-url.ts';
import { unreadableUpstreamBody } from '../../src/errors/unreadable-upstream-body.ts';

/** The body of Vertex's text-embedding `:predict`, as far as the gateway fills it. */
export interface VertexEmbeddingsRequestBody {
  instances: { content: string; task_type?: string }[];
  parameters?: { outputDimensionality?: number };
}

/** One prediction of a text-embedding model: the vector and, per input, its token count. */
const predictionSchema = z.object({
  embeddings: z.object({
    values: z.array(z.number()),
    statistics: z.nullish(z.object({ token_count: z.nullish(z.number()), truncated: z.nullish(z.boolean()) })),
  }),
});

/** Vertex's `PredictResponse` for a text-embedding model; `model` is only set for some endpoints. */
const predictResponseSchema = z.object({
  predictions: z.array(predictionSchema),
  metadata: z.nullish(z.object({ billableCharacterCount: z.nullish(z.number()) })),
  model: z.nullish(z.string()),
});

/**
 * Builds Vertex's `POST .../publishers/google/models/{model}:predict` for a text-embedding model
 * (`text-embedding-005`, `text-multilingual-embedding-002`, `gemini-embedding-001`): one instance `{content}` per
 * input, `dimensions` as `parameters.outputDimensionality`, and the deployment's `embeddingTaskType` (e.g.
 * `RETRIEVAL_DOCUMENT`) as each instance's `task_type`. Token-id inputs are a 400 naming `input`: Vertex embeds text
 * only. `user` has no Vertex equivalent and is dropped. Vertex's limits (250 inputs, and one input for
 * `gemini-embedding-001`) are Vertex's to enforce: its 400 reaches the client with its message.
 *
 * @example
 * const upstream = await buildVertexEmbeddingsRequest({ model: 'embed', input: ['hello'] }, target);
 * // upstream.url ends with '/publishers/google/models/text-embedding-005:predict'
 * // upstream.body === '{"instances":[{"content":"hello"}]}'
 */
export async function buildVertexEmbeddingsRequest(
  request: CanonicalEmbeddingsRequest,
  target: UpstreamTarget,
  dependencies: VertexCredentialDependencies = {},
): Promise<UpstreamRequest> {
  const options = readVertexOptions(target.options);
  const texts = request.input.map((item, index) => {
    if (typeof item !== 'string') {
      throw invalidRequest('Vertex AI embeds text only; send input as strings, not token ids.', `input.[${index}]`);
    }
    return item;
  });
  const body: VertexEmbeddingsRequestBody = {
    instances: texts.map((content) =>
      options.embeddingTaskType === undefined ? { content } : { content, task_type: options.embeddingTaskType },
    ),
  };
  if (request.dimensions !== undefined) body.parameters = { outputDimensionality: request.dimensions };
  const accessToken = await vertexAccessToken(target, dependencies);
  return {
    url: vertexModelUrl(target, options, 'google', 'predict'),
    method: 'POST',
    headers: vertexHeaders(target, accessToken),
    body: JSON.stringify(body),
  };
}

/**
 * Reads Vertex's text-embedding `PredictResponse`: `predictions[i].embeddings.values` is input i's vector, and the
 * sum of `embeddings.statistics.token_count` the input tokens (no usage when Vertex reported no counts; the
 * `metadata.billableCharacterCount` it also sends is characters, not tokens, and stays in `raw`). The predict answer
 * names no model: `model` is empty unless Vertex set one. A body of another shape is a 502
 * `upstream_invalid_response`.
 *
 * @example
 * parseVertexEmbeddingsResponse({ predictions: [{ embeddings: { values: [0.1, 0.2], statistics: { token_count: 2, truncated: false } } }] });
 * // { model: '', data: [{ index: 0, embedding: [0.1, 0.2] }], usage: { inputTokens: 2, outputTokens: 0, totalTokens: 2, raw: ... } }
 */
export function parseVertexEmbeddingsResponse(body: unknown): CanonicalEmbeddingsResponse {
  const parsed = predictResponseSchema.safeParse(body);
  if (!parsed.success) {
    throw unreadableUpstreamBody(vertexProviderId, 'Vertex AI sent an embeddings response', parsed.error.issues, body);
  }
  const { predictions, metadata, model } = parsed.data;
  const counts = predictions.map((prediction) => prediction.embeddings.statistics?.token_count);
  const counted = counts.some((count) => typeof count === 'number');
  const inputTokens = counts.reduce<number>((sum, count) => sum + Math.round(count ?? 0), 0);
  return {
    model: model ?? '',
    data: predictions.map((prediction, index) => ({ index, embedding: prediction.embeddings.values })),
    usage: counted
      ? {
          inputTokens,
          outputTokens: 0,
          totalTokens: inputTokens,
          raw: {
            token_counts: counts,
            ...(metadata?.billableCharacterCount == null
              ? {}
              : { billableCharacterCount: metadata.billableCharacterCount }),
          },
        }
      : undefined,
  };
}
