import { describe, expect, it } from 'vitest';
import { float32Base64, renderOpenAIEmbeddingsResponse } from './openai-embeddings-convert.ts';

/** Decodes base64 as OpenAI's SDKs do: little-endian float32s. */
function decode(base64: string): number[] {
  const bytes = Uint8Array.from(atob(base64), (character) => character.charCodeAt(0));
  return Array.from(new Float32Array(bytes.buffer));
}

describe('renderOpenAIEmbeddingsResponse', () => {
  const response = {
    model: 'embedder',
    data: [
      { index: 0, embedding: [0.5, -1.25, 3] },
      { index: 1, embedding: 'AAAAPw==' },
    ],
    usage: { inputTokens: 4, outputTokens: 0, totalTokens: 4 },
  };

  it('encodes float vectors for a client that asked for base64, as the SDK decodes them', () => {
    const rendered = renderOpenAIEmbeddingsResponse(response, 'base64') as { data: { embedding: string }[] };
    expect(decode(rendered.data[0]!.embedding)).toEqual([0.5, -1.25, 3]);
    // An upstream that already answered base64 is passed on as it is.
    expect(rendered.data[1]!.embedding).toBe('AAAAPw==');
  });

  it('keeps floats for a client that asked for floats', () => {
    const rendered = renderOpenAIEmbeddingsResponse(response, 'float') as { data: { embedding: unknown }[] };
    expect(rendered.data[0]!.embedding).toEqual([0.5, -1.25, 3]);
  });

  it('encodes vectors longer than one argument list holds', () => {
    const long = Array.from({ length: 20_000 }, (_, index) => index / 8);
    expect(decode(float32Base64(long))).toEqual(long);
  });
});
