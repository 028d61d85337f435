import * as z from 'zod/mini';
import { invalidRequest } from '../../errors.ts';
import { firstValidationProblem } from '../../validation/zod-issues.ts';
import type { ClientDialect } from '../dialect.ts';
import { checkOpenAIAnswer } from '../openai-chat/openai-answer-check.ts';
import { createOpenAINativeStreamTap, openAINativeBody } from '../openai-chat/openai-chat-dialect.ts';
import { renderOpenAIStreamBreak } from '../openai-chat/openai-chat-render-stream.ts';

/**
 * OpenAI's legacy text completions request: only the fields the gateway reads are checked, the rest passes through
 * (`prompt`, `suffix`, `echo`, `best_of` ... are the upstream's to judge).
 */
export const openAICompletionsRequestSchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  prompt: z.optional(z.unknown()),
  stream: z.nullish(z.boolean()),
  stream_options: z.nullish(z.looseObject({ include_usage: z.nullish(z.boolean()) })),
  max_tokens: z.nullish(z.int().check(z.gte(0))),
});

/** A validated legacy completions request. */
export type OpenAICompletionsRequest = z.infer<typeof openAICompletionsRequestSchema>;

/**
 * OpenAI's legacy text completions (`POST /v1/completions`), still used by code-completion tools and older
 * clients. It is only passed through, to deployments that serve it (OpenAI, vLLM, Ollama, Together, Fireworks ...: see
 * the presets' `nativeDialects`); a deployment that does not gets a 400 naming it, since a prompt-in, text-out API
 * has no faithful translation to chat. Streams are tapped like chat streams (usage requested and removed again when
 * the client did not ask for it, `[DONE]` required).
 *
 * @example
 * app.post('/v1/completions', handleModelRequest(modelRoute(dependencies, openAICompletionsDialect, chatOperation)));
 */
export const openAICompletionsDialect: ClientDialect<OpenAICompletionsRequest, never, never> = {
  id: 'openai-completions',
  errorDialect: 'openai',
  parseRequest(body) {
    const result = openAICompletionsRequestSchema.safeParse(body);
    if (result.success) return result.data;
    const problem = firstValidationProblem(result.error.issues);
    throw invalidRequest(problem.message, problem.param);
  },
  summarize: (request) => ({
    model: request.model,
    stream: request.stream === true,
    maxOutputTokens: request.max_tokens ?? 0,
  }),
  featureParameters: {
    n: 'n',
    logprobs: 'logprobs',
    'top-k': 'top_k',
    files: 'prompt',
    images: 'prompt',
    'json-schema': 'response_format',
    tools: 'tools',
    reasoning: 'reasoning_effort',
    documents: 'documents',
  },
  nativeBody: openAINativeBody,
  checkNativeAnswer: checkOpenAIAnswer,
  createNativeStreamTap: createOpenAINativeStreamTap,
  renderStreamBreak: renderOpenAIStreamBreak,
};
