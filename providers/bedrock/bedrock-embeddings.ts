import * as z from 'zod/mini';
import type {
  CanonicalEmbeddingsRequest,
  CanonicalEmbeddingsResponse,
  UpstreamRequest,
  UpstreamTarget,
} from '../../src/canonical/index.ts';
import { GatewayError, invalidRequest } from '../../src/errors.ts';
import { bedrockBaseURL, bedrockCredentials, readBedrockOptions } from './bedrock-options.ts';
import { bedrockModelURL, lowerCased } from './bedrock-request.ts';
import { authorizeBedrockRequest } from './bedrock-signing.ts';

/** The embedding model families Bedrock's InvokeModel serves, each with its own body. */
export type BedrockEmbeddingFamily = 'titan' | 'cohere-v3' | 'cohere-v4';

/** Cohere's limit on texts per call. */
const largestCohereBatch = 96;

/** The output sizes Titan Text Embeddings V2 and Cohere Embed v4 take. */
const titanDimensions = [256, 512, 1024];
const cohereV4Dimensions = [256, 512, 1024, 1536];

/**
 * The family of an embedding model id, by its provider prefix (a cross-region profile's `us.`/`eu.`/`global.` and a
 * foundation-model ARN's path allowed): `amazon.titan-embed-*` is Titan, `cohere.embed-v4*` Cohere v4, other
 * `cohere.embed-*` Cohere v3; anything else is undefined.
 */
export function bedrockEmbeddingFamily(model: string): BedrockEmbeddingFamily | undefined {
  if (/(^|[./])amazon\.titan-embed/.test(model)) return 'titan';
  if (/(^|[./])cohere\.embed-v4/.test(model)) return 'cohere-v4';
  if (/(^|[./])cohere\.embed-/.test(model)) return 'cohere-v3';
  return undefined;
}

/**
 * Builds Bedrock's `POST /model/{modelId}/invoke` for an embedding model, the body chosen by the model id:
 * - Titan (`amazon.titan-embed-text-v2:0`): `{inputText, dimensions?, normalize: true}`; G1 (`amazon.titan-embed-text-v1`):
 *   `{inputText}` only.
 *   Titan embeds ONE text per call and the translator builds one request, so more than one input is a 400 naming
 *   `input` (send one text per request, or use a Cohere model). `dimensions` must be 256, 512 or 1024 (V2).
 * - Cohere Embed v3 (`cohere.embed-english-v3`, `cohere.embed-multilingual-v3`): `{texts, input_type}` with up to 96
 *   texts; `input_type` is `options.embeddingInputType` (default `search_document`). It has no output size, so
 *   `dimensions` is a 400.
 * - Cohere Embed v4 (`cohere.embed-v4:0`): the same plus `embedding_types: ["float"]` and `output_dimension` from
 *   `dimensions` (256, 512, 1024 or 1536).
 *
 * Token-array inputs are a 400 (Bedrock takes text). `encoding_format: "base64"` is answered with float arrays: the
 * response reader does not see the request (OpenAI's SDKs, which ask for base64 by default, accept arrays). A model of
 * another family is a 400 naming `model`.
 *
 * @example
 * const upstream = await buildBedrockEmbeddingsRequest({ model: 'embed', input: ['hello'] }, target);
 * // upstream.url === 'https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.titan-embed-text-v2%3A0/invoke'
 */
export async function buildBedrockEmbeddingsRequest(
  request: CanonicalEmbeddingsRequest,
  target: UpstreamTarget,
): Promise<UpstreamRequest> {
  const options = readBedrockOptions(target.options);
  const baseURL = bedrockBaseURL(target, options);
  const credentials = bedrockCredentials(target, options, baseURL);
  const body = toInvokeEmbeddingsBody(request, target.model, options.embeddingInputType ?? 'search_document');
  return authorizeBedrockRequest(
    {
      url: bedrockModelURL(baseURL, target.model, 'invoke'),
      headers: { 'content-type': 'application/json', accept: 'application/json', ...lowerCased(target.headers) },
      body: JSON.stringify(body),
    },
    credentials,
  );
}

/** The InvokeModel body of an embeddings request (exported for tests). */
export function toInvokeEmbeddingsBody(
  request: CanonicalEmbeddingsRequest,
  model: string,
  inputType: string,
): Record<string, unknown> {
  const family = bedrockEmbeddingFamily(model);
  if (family === undefined) {
    throw invalidRequest(
      `The gateway embeds through Bedrock with Amazon Titan and Cohere Embed models only, not ${model}.`,
      'model',
    );
  }
  const texts = request.input.map((item, index) => {
    if (typeof item !== 'string')
      throw invalidRequest('Bedrock embedding models take text, not token arrays.', `input.[${index}]`);
    return item;
  });
  if (texts.length === 0) throw invalidRequest('There is no input to embed.', 'input');
  if (family === 'titan') {
    // Titan Text Embeddings G1 (`amazon.titan-embed-text-v1`) takes `inputText` only; `dimensions` and `normalize` are
    // V2's. The multimodal Titan models take images, which this text embeddings request cannot carry.
    if (/titan-embed-image/.test(model)) {
      throw invalidRequest(
        'Amazon Titan Multimodal Embeddings is not served through this text embeddings API.',
        'model',
      );
    }
    const firstGeneration = /titan-embed-text-v1/.test(model);
    if (texts.length > 1) {
      throw invalidRequest(
        `Amazon Titan embeds one text per request on Bedrock; this request has ${texts.length}. Send them one at a time.`,
        'input',
      );
    }
    if (firstGeneration) {
      if (request.dimensions !== undefined)
        throw invalidRequest(
          'Amazon Titan Text Embeddings G1 has a fixed output size; leave dimensions out.',
          'dimensions',
        );
      return { inputText: texts[0] };
    }
    if (request.dimensions !== undefined && !titanDimensions.includes(request.dimensions)) {
      throw invalidRequest('Amazon Titan Text Embeddings V2 takes dimensions of 256, 512 or 1024.', 'dimensions');
    }
    return {
      inputText: texts[0],
      ...(request.dimensions === undefined ? {} : { dimensions: request.dimensions }),
      normalize: true,
    };
  }
  if (texts.length > largestCohereBatch) {
    throw invalidRequest(`Cohere Embed on Bedrock takes at most ${largestCohereBatch} texts per request.`, 'input');
  }
  if (family === 'cohere-v3') {
    if (request.dimensions !== undefined) {
      throw invalidRequest('Cohere Embed v3 has a fixed output size; leave dimensions out.', 'dimensions');
    }
    return { texts, input_type: inputType };
  }
  if (request.dimensions !== undefined && !cohereV4Dimensions.includes(request.dimensions)) {
    throw invalidRequest('Cohere Embed v4 takes dimensions of 256, 512, 1024 or 1536.', 'dimensions');
  }
  return {
    texts,
    input_type: inputType,
    embedding_types: ['float'],
    ...(request.dimensions === undefined ? {} : { output_dimension: request.dimensions }),
  };
}

const titanResponseSchema = z.object({ embedding: z.array(z.number()), inputTextTokenCount: z.nullish(z.number()) });

const cohereResponseSchema = z.object({
  id: z.nullish(z.string()),
  response_type: z.nullish(z.string()),
  embeddings: z.union([z.array(z.array(z.number())), z.object({ float: z.array(z.array(z.number())) })]),
  meta: z.nullish(z.object({ billed_units: z.nullish(z.object({ input_tokens: z.nullish(z.number()) })) })),
});

/**
 * Reads an InvokeModel embeddings answer, recognised by its shape: Titan's `{embedding, inputTextTokenCount}` (usage
 * from the count) or Cohere's `{id, embeddings, response_type, texts}` (`embeddings` a list of float lists for
 * `embeddings_floats`, or `{float: [...]}` for `embeddings_by_type`). Bedrock's Cohere bodies report no token count
 * (it travels in the `x-amzn-bedrock-input-token-count` header), so their usage is undefined unless the body carries
 * Cohere's `meta.billed_units`. The body names no model: `model` is `''`. Any other body is a 502.
 */
export function parseBedrockEmbeddingsResponse(body: unknown): CanonicalEmbeddingsResponse {
  const titan = titanResponseSchema.safeParse(body);
  if (titan.success) {
    const tokens = titan.data.inputTextTokenCount ?? undefined;
    return {
      model: '',
      data: [{ index: 0, embedding: titan.data.embedding }],
      usage:
        tokens === undefined
          ? undefined
          : { inputTokens: tokens, outputTokens: 0, totalTokens: tokens, raw: { inputTextTokenCount: tokens } },
    };
  }
  const cohere = cohereResponseSchema.safeParse(body);
  if (cohere.success) {
    const { embeddings, meta } = cohere.data;
    const vectors = Array.isArray(embeddings) ? embeddings : embeddings.float;
    const tokens = meta?.billed_units?.input_tokens ?? undefined;
    return {
      model: '',
      data: vectors.map((embedding, index) => ({ index, embedding })),
      usage:
        tokens === undefined ? undefined : { inputTokens: tokens, outputTokens: 0, totalTokens: tokens, raw: meta },
    };
  }
  throw new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_invalid_response',
    provider: 'bedrock',
    retryable: true,
    upstreamBody: body,
    message: 'Bedrock sent an embeddings response the gateway cannot read (neither a Titan nor a Cohere body).',
  });
}
