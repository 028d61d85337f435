import type { CanonicalEmbeddingsRequest, CanonicalEmbeddingsResponse } from '../../canonical/canonical-embeddings.ts';
import { invalidRequest } from '../../errors.ts';
import { firstValidationProblem } from '../../validation/zod-issues.ts';
import type { ClientDialect } from '../dialect.ts';
import { checkOpenAIAnswer } from '../openai-chat/openai-answer-check.ts';
import { renderOpenAIStreamBreak } from '../openai-chat/openai-chat-render-stream.ts';
import { openAIEmbeddingsToCanonical, renderOpenAIEmbeddingsResponse } from './openai-embeddings-convert.ts';
import { openAIEmbeddingsRequestSchema, type OpenAIEmbeddingsRequest } from './openai-embeddings-request-schema.ts';

/**
 * OpenAI embeddings (`POST /v1/embeddings`); never streamed. Same-dialect answers (often megabytes of vectors) are
 * relayed unparsed once checked.
 *
 * @example
 * app.post('/v1/embeddings', handleModelRequest(modelRoute(dependencies, openAIEmbeddingsDialect, embeddingsOperation)));
 */
export const openAIEmbeddingsDialect: ClientDialect<
  OpenAIEmbeddingsRequest,
  CanonicalEmbeddingsRequest,
  CanonicalEmbeddingsResponse
> = {
  id: 'openai-embeddings',
  errorDialect: 'openai',
  parseRequest(body) {
    const result = openAIEmbeddingsRequestSchema.safeParse(body);
    if (result.success) return result.data;
    const problem = firstValidationProblem(result.error.issues);
    throw invalidRequest(problem.message, problem.param);
  },
  summarize: (request) => ({ model: request.model, stream: false, maxOutputTokens: 0 }),
  // Embeddings use no chat feature; the names are there for the seam's completeness.
  featureParameters: {
    n: 'n',
    logprobs: 'logprobs',
    'top-k': 'top_k',
    files: 'input',
    images: 'input',
    'json-schema': 'response_format',
    tools: 'tools',
    reasoning: 'reasoning_effort',
    documents: 'documents',
  },
  toCanonical: openAIEmbeddingsToCanonical,
  nativeBody: (_request, body, target) => ({ ...body, model: target.model }),
  checkNativeAnswer: checkOpenAIAnswer,
  renderResponse: (answer, request) =>
    JSON.stringify(renderOpenAIEmbeddingsResponse(answer, request.encoding_format ?? 'float')),
  renderStreamBreak: renderOpenAIStreamBreak,
};
