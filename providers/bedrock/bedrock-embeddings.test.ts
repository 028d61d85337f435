import { describe, expect, it } from 'vitest';
import type { UpstreamTarget } from '../../src/canonical/index.ts';
import {
  bedrockEmbeddingFamily,
  buildBedrockEmbeddingsRequest,
  parseBedrockEmbeddingsResponse,
  toInvokeEmbeddingsBody,
} from './bedrock-embeddings.ts';

const target = (model: string): UpstreamTarget => ({
  providerName: 'bedrock',
  baseURL: '',
  model,
  apiKey: 'ABSKkey',
  headers: {},
  options: { region: 'eu-central-1', embeddingInputType: 'search_query' },
});

describe('Bedrock embeddings', () => {
  it('knows the families by model id', () => {
    expect(bedrockEmbeddingFamily('amazon.titan-embed-text-v2:0')).toBe('titan');
    expect(bedrockEmbeddingFamily('cohere.embed-multilingual-v3')).toBe('cohere-v3');
    expect(bedrockEmbeddingFamily('us.cohere.embed-v4:0')).toBe('cohere-v4');
    expect(bedrockEmbeddingFamily('amazon.nova-pro-v1:0')).toBeUndefined();
  });

  it('invokes Titan with one text and Cohere with many', async () => {
    const titan = await buildBedrockEmbeddingsRequest(
      { model: 'e', input: ['hello'], dimensions: 512 },
      target('amazon.titan-embed-text-v2:0'),
    );
    expect(titan.url).toBe(
      'https://bedrock-runtime.eu-central-1.amazonaws.com/model/amazon.titan-embed-text-v2%3A0/invoke',
    );
    expect(JSON.parse(titan.body ?? '')).toEqual({ inputText: 'hello', dimensions: 512, normalize: true });
    expect(titan.headers.authorization).toBe('Bearer ABSKkey');
    const cohere = await buildBedrockEmbeddingsRequest(
      { model: 'e', input: ['a', 'b'] },
      target('cohere.embed-english-v3'),
    );
    expect(JSON.parse(cohere.body ?? '')).toEqual({ texts: ['a', 'b'], input_type: 'search_query' });
    expect(
      toInvokeEmbeddingsBody({ model: 'e', input: ['a'], dimensions: 256 }, 'cohere.embed-v4:0', 'search_document'),
    ).toEqual({
      texts: ['a'],
      input_type: 'search_document',
      embedding_types: ['float'],
      output_dimension: 256,
    });
  });

  it('refuses what one request cannot carry', () => {
    const body = (input: string[] | number[][], model: string, dimensions?: number) =>
      toInvokeEmbeddingsBody(
        { model: 'e', input, ...(dimensions === undefined ? {} : { dimensions }) },
        model,
        'search_document',
      );
    expect(() => body(['a', 'b'], 'amazon.titan-embed-text-v2:0')).toThrow(
      expect.objectContaining({ status: 400, param: 'input' }) as Error,
    );
    expect(() => body([[1, 2]], 'cohere.embed-english-v3')).toThrow(
      expect.objectContaining({ param: 'input.[0]' }) as Error,
    );
    expect(() => body(['a'], 'cohere.embed-english-v3', 512)).toThrow(
      expect.objectContaining({ param: 'dimensions' }) as Error,
    );
    expect(() => body(['a'], 'amazon.titan-embed-text-v2:0', 300)).toThrow(
      expect.objectContaining({ param: 'dimensions' }) as Error,
    );
    expect(() => body(['a'], 'meta.llama3-8b-instruct-v1:0')).toThrow(
      expect.objectContaining({ param: 'model' }) as Error,
    );
  });

  it('reads Titan, Cohere float lists and Cohere by-type bodies', () => {
    expect(parseBedrockEmbeddingsResponse({ embedding: [0.1, 0.2], inputTextTokenCount: 3 })).toEqual({
      model: '',
      data: [{ index: 0, embedding: [0.1, 0.2] }],
      usage: { inputTokens: 3, outputTokens: 0, totalTokens: 3, raw: { inputTextTokenCount: 3 } },
    });
    expect(
      parseBedrockEmbeddingsResponse({
        id: 'x',
        response_type: 'embeddings_by_type',
        embeddings: { float: [[1], [2]] },
        texts: ['a', 'b'],
      }).data,
    ).toEqual([
      { index: 0, embedding: [1] },
      { index: 1, embedding: [2] },
    ]);
    expect(() => parseBedrockEmbeddingsResponse({ vectors: [] })).toThrow(
      expect.objectContaining({ status: 502, code: 'upstream_invalid_response' }) as Error,
    );
  });

  it('sends Titan G1 its inputText alone, and refuses the multimodal Titan', () => {
    expect(
      toInvokeEmbeddingsBody({ model: 'e', input: ['hi'] }, 'amazon.titan-embed-text-v1', 'search_document'),
    ).toEqual({
      inputText: 'hi',
    });
    expect(() =>
      toInvokeEmbeddingsBody(
        { model: 'e', input: ['hi'], dimensions: 256 },
        'amazon.titan-embed-text-v1',
        'search_document',
      ),
    ).toThrow('fixed output size');
    expect(() => toInvokeEmbeddingsBody({ model: 'e', input: ['hi'] }, 'amazon.titan-embed-image-v1', 'x')).toThrow(
      'Multimodal',
    );
  });
});
