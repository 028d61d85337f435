import * as z from 'zod/mini';
import type {
  CanonicalEmbeddingsRequest,
  CanonicalEmbeddingsResponse,
  UpstreamRequest,
  UpstreamTarget,
} from '../../src/canonical/index.ts';
import { invalidRequest } from '../../src/errors.ts';
import { invalidCohereBody, invalidFields } from './cohere-error.ts';
import { cohereHeaders, defaultCohereEmbeddingInputType, readCohereOptions } from './cohere-options.ts';

/** The body of `POST /v2/embed`, as far as the gateway fills it. */
export interface CohereEmbedRequestBody {
  model: string;
  texts: string[];
  input_type: string;
  embedding_types: ['float'] | ['base64'];
  output_dimension?: number;
  truncate?: 'NONE' | 'START' | 'END';
}

/**
 * Builds Cohere's `POST {baseURL}/v2/embed` from a canonical embeddings request:
 * - `input_type` (required by Cohere's v3 and newer models, unknown to OpenAI clients) comes from the deployment's
 *   `embeddingInputType` option, default `search_document`;
 * - `embedding_types` is `['float']`, or `['base64']` when the client asked `encoding_format: "base64"`: Cohere's
 *   base64 embeddings are the float embedding's bytes, base64-encoded, which is OpenAI's encoding (Cohere's own
 *   OpenAI-compatible endpoint serves `encoding_format: "base64"` from them); the response reader returns whichever
 *   type came back;
 * - `dimensions` becomes `output_dimension` (embed-v4: 256, 512, 1024 or 1536); `truncate` comes from the
 *   `embeddingTruncate` option; `user` is dropped.
 * Token-array inputs are a 400 naming `input`: Cohere embeds text only.
 *
 * @example
 * buildCohereEmbeddingsRequest({ model: 'embed', input: ['hello'] }, target).body;
 * // '{"model":"embed-v4.0","texts":["hello"],"input_type":"search_document","embedding_types":["float"]}'
 */
export function buildCohereEmbeddingsRequest(
  request: CanonicalEmbeddingsRequest,
  target: UpstreamTarget,
): UpstreamRequest {
  const options = readCohereOptions(target.options);
  const texts = request.input.map((item) => {
    if (typeof item !== 'string') throw invalidRequest('Cohere embeds text only, not token arrays.', 'input');
    return item;
  });
  const body: CohereEmbedRequestBody = {
    model: target.model,
    texts,
    input_type: options.embeddingInputType ?? defaultCohereEmbeddingInputType,
    embedding_types: request.encodingFormat === 'base64' ? ['base64'] : ['float'],
  };
  if (request.dimensions !== undefined) body.output_dimension = request.dimensions;
  if (options.embeddingTruncate !== undefined) body.truncate = options.embeddingTruncate;
  return {
    url: `${target.baseURL}/v2/embed`,
    method: 'POST',
    headers: cohereHeaders(target, 'application/json'),
    body: JSON.stringify(body),
  };
}

/** A v2 embed response: only the fields read. */
const cohereEmbedResponseSchema = z.object({
  embeddings: z.object({
    float: z.nullish(z.array(z.array(z.number()))),
    base64: z.nullish(z.array(z.string())),
  }),
  meta: z.nullish(
    z.object({
      billed_units: z.nullish(z.object({ input_tokens: z.nullish(z.number()) })),
      tokens: z.nullish(z.object({ input_tokens: z.nullish(z.number()) })),
    }),
  ),
});

/**
 * Reads a Cohere v2 embed response: the `float` embeddings (or the `base64` ones, for a base64 request) in input
 * order. Usage is the billed input tokens (`meta.billed_units`, else `meta.tokens`), with no output tokens; the
 * `meta` object is kept as `raw`. The model is empty: Cohere's answer does not name it. A body without embeddings
 * is a 502 `upstream_invalid_response`.
 *
 * @example
 * parseCohereEmbeddingsResponse(await response.json()).data[0]?.embedding; // [0.016296387, -0.008354187, ...]
 */
export function parseCohereEmbeddingsResponse(body: unknown): CanonicalEmbeddingsResponse {
  const parsed = cohereEmbedResponseSchema.safeParse(body);
  if (!parsed.success) throw invalidCohereBody('an embeddings response', invalidFields(parsed.error.issues), body);
  const { embeddings, meta } = parsed.data;
  const vectors: (number[] | string)[] | null | undefined = embeddings.float ?? embeddings.base64;
  if (vectors === null || vectors === undefined)
    throw invalidCohereBody('an embeddings response', 'embeddings (neither float nor base64)', body);
  const inputTokens = meta?.billed_units?.input_tokens ?? meta?.tokens?.input_tokens;
  return {
    model: '',
    data: vectors.map((embedding, index) => ({ index, embedding })),
    usage:
      inputTokens === null || inputTokens === undefined
        ? undefined
        : { inputTokens, outputTokens: 0, totalTokens: inputTokens, raw: (body as { meta: unknown }).meta },
  };
}
