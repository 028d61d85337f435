import type { CanonicalEmbeddingsRequest, CanonicalEmbeddingsResponse } from '../../canonical/canonical-embeddings.ts';
import type { OpenAIEmbeddingsRequest } from './openai-embeddings-request-schema.ts';

/** Converts a validated OpenAI embeddings request to canonical form (single inputs become one-element lists). */
export function openAIEmbeddingsToCanonical(request: OpenAIEmbeddingsRequest): CanonicalEmbeddingsRequest {
  const input = request.input;
  const canonical: CanonicalEmbeddingsRequest = {
    model: request.model,
    input:
      typeof input === 'string'
        ? [input]
        : typeof input[0] === 'number'
          ? [input as number[]]
          : (input as string[] | number[][]),
  };
  if (request.encoding_format !== undefined) canonical.encodingFormat = request.encoding_format;
  if (request.dimensions !== undefined) canonical.dimensions = request.dimensions;
  if (request.user !== undefined) canonical.user = request.user;
  return canonical;
}

/** Renders a canonical embeddings response as OpenAI's `list` of `embedding` objects. */
export function renderOpenAIEmbeddingsResponse(response: CanonicalEmbeddingsResponse): Record<string, unknown> {
  return {
    object: 'list',
    data: response.data.map((item) => ({ object: 'embedding', index: item.index, embedding: item.embedding })),
    model: response.model,
    usage: { prompt_tokens: response.usage?.inputTokens ?? 0, total_tokens: response.usage?.totalTokens ?? 0 },
  };
}
