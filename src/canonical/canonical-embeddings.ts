import type { CanonicalUsage } from './canonical-usage.ts';

/** An embeddings request in canonical form. */
export interface CanonicalEmbeddingsRequest {
  /** The model group the client asked for. */
  model: string;
  input: string[] | number[][];
  encodingFormat?: 'float' | 'base64';
  dimensions?: number;
  user?: string;
}

/** An embeddings response in canonical form. `embedding` is a float array or, for base64 requests, a string. */
export interface CanonicalEmbeddingsResponse {
  model: string;
  data: { index: number; embedding: number[] | string }[];
  usage: CanonicalUsage | undefined;
}
