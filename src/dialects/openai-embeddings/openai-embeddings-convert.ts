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

/**
 * A float vector as OpenAI's base64 encoding: the little-endian float32 bytes, base64-encoded. For upstreams that
 * answer floats only (Gemini, Bedrock, Vertex AI) when the client asked for base64, as OpenAI's SDKs do by default.
 */
export function float32Base64(vector: readonly number[]): string {
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  vector.forEach((value, index) => view.setFloat32(index * 4, value, true));
  let binary = '';
  // In slices: String.fromCharCode takes its bytes as arguments, and arguments are bounded.
  for (let offset = 0; offset < bytes.length; offset += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(offset, offset + 0x8000));
  return btoa(binary);
}

/**
 * Renders a canonical embeddings response as OpenAI's `list` of `embedding` objects, each vector in the encoding the
 * client asked for (float arrays become base64 for `encoding_format: "base64"`).
 */
export function renderOpenAIEmbeddingsResponse(
  response: CanonicalEmbeddingsResponse,
  encodingFormat: 'float' | 'base64' = 'float',
): Record<string, unknown> {
  return {
    object: 'list',
    data: response.data.map((item) => ({
      object: 'embedding',
      index: item.index,
      embedding:
        encodingFormat === 'base64' && typeof item.embedding !== 'string'
          ? float32Base64(item.embedding)
          : item.embedding,
    })),
    model: response.model,
    usage: { prompt_tokens: response.usage?.inputTokens ?? 0, total_tokens: response.usage?.totalTokens ?? 0 },
  };
}
