import { describe, expect, it } from 'vitest';
import type { UpstreamTarget } from '../../src/canonical/index.ts';
import { isGatewayError } from '../../src/errors.ts';
import { buildCohereEmbeddingsRequest, parseCohereEmbeddingsResponse } from './cohere-embeddings.ts';

const target: UpstreamTarget = {
  providerName: 'cohere',
  baseURL: 'https://api.cohere.com',
  model: 'embed-v4.0',
  apiKey: 'co-key',
  headers: {},
  options: {},
};

describe('buildCohereEmbeddingsRequest', () => {
  it('posts texts to /v2/embed as search documents, floats by default', () => {
    const upstream = buildCohereEmbeddingsRequest({ model: 'embed', input: ['hello', 'goodbye'], user: 'u-1' }, target);
    expect(upstream.url).toBe('https://api.cohere.com/v2/embed');
    expect(upstream.headers.authorization).toBe('Bearer co-key');
    expect(JSON.parse(upstream.body ?? '')).toEqual({
      model: 'embed-v4.0',
      texts: ['hello', 'goodbye'],
      input_type: 'search_document',
      embedding_types: ['float'],
    });
  });

  it('takes input_type and truncate from the options, dimensions and base64 from the request', () => {
    const upstream = buildCohereEmbeddingsRequest(
      { model: 'embed', input: ['hello'], dimensions: 512, encodingFormat: 'base64' },
      { ...target, options: { embeddingInputType: 'search_query', embeddingTruncate: 'START' } },
    );
    expect(JSON.parse(upstream.body ?? '')).toEqual({
      model: 'embed-v4.0',
      texts: ['hello'],
      input_type: 'search_query',
      embedding_types: ['base64'],
      output_dimension: 512,
      truncate: 'START',
    });
  });

  it('refuses token arrays, naming input', () => {
    try {
      buildCohereEmbeddingsRequest({ model: 'embed', input: [[1, 2, 3]] }, target);
      throw new Error('expected a GatewayError');
    } catch (error) {
      expect(isGatewayError(error) && error.status === 400 && error.param === 'input').toBe(true);
    }
  });
});

describe('parseCohereEmbeddingsResponse', () => {
  it('reads base64 embeddings when those came back', () => {
    const response = parseCohereEmbeddingsResponse({
      id: 'e1',
      embeddings: { base64: ['AACAPwAAAEA='] },
      meta: { billed_units: { input_tokens: 1 } },
    });
    expect(response.data).toEqual([{ index: 0, embedding: 'AACAPwAAAEA=' }]);
    expect(response.usage).toMatchObject({ inputTokens: 1, outputTokens: 0, totalTokens: 1 });
  });

  it('reports no usage when Cohere sent no meta', () => {
    expect(parseCohereEmbeddingsResponse({ id: 'e1', embeddings: { float: [[0.5]] } }).usage).toBeUndefined();
  });

  it('answers a body without embeddings with a 502', () => {
    for (const body of [{ id: 'e1' }, { id: 'e1', embeddings: {} }]) {
      try {
        parseCohereEmbeddingsResponse(body);
        throw new Error('expected a GatewayError');
      } catch (error) {
        expect(isGatewayError(error) && error.status === 502 && error.code === 'upstream_invalid_response').toBe(true);
      }
    }
  });
});
