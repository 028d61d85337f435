import * as z from 'zod/mini';
import '../../validation/zod-issues.ts';

/** Schema of `POST /v1/embeddings` bodies; unknown fields pass through to OpenAI-compatible upstreams. */
export const openAIEmbeddingsRequestSchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  input: z.union([
    z.string(),
    z.array(z.string()).check(z.minLength(1), z.maxLength(2048)),
    z.array(z.int()).check(z.minLength(1)),
    z.array(z.array(z.int()).check(z.minLength(1))).check(z.minLength(1), z.maxLength(2048)),
  ]),
  encoding_format: z.optional(z.enum(['float', 'base64'])),
  dimensions: z.optional(z.int().check(z.positive())),
  user: z.optional(z.string()),
});

/** A validated OpenAI embeddings request. */
export type OpenAIEmbeddingsRequest = z.infer<typeof openAIEmbeddingsRequestSchema>;
