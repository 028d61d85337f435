import {
  openAIEmbeddingsToCanonical,
  renderOpenAIEmbeddingsResponse,
} from '../dialects/openai-embeddings/openai-embeddings-convert.ts';
import { openAIEmbeddingsRequestSchema } from '../dialects/openai-embeddings/openai-embeddings-request-schema.ts';
import { invalidRequest } from '../errors.ts';
import { firstValidationProblem } from '../validation/zod-issues.ts';
import { authenticateRequest } from './authenticate-request.ts';
import { callDeployment, readUpstreamText } from './call-upstream.ts';
import { checkedOpenAIAnswer, jsonResponse, parseUpstreamAnswer } from './gateway-responses.ts';
import type { RouteDependencies } from './gateway-context.ts';
import type { GatewayContext } from '../gateway-environment.ts';
import { readJsonObjectBody } from './read-json-body.ts';
import { admitRequest, estimateTokensFromText } from './request-accounting.ts';
import { resolveDeployment } from './resolve-route.ts';

/** `POST /v1/embeddings`: passed through to OpenAI-compatible upstreams, translated for the others. */
export function createEmbeddingsHandler(dependencies: RouteDependencies) {
  return async (c: GatewayContext): Promise<Response> => {
    const record = c.var.record;
    record.operation = 'embeddings';
    const request = c.req.raw;
    const auth = await authenticateRequest(dependencies, request, record);
    const measured = { textLength: 0 };
    const body = await readJsonObjectBody(request, dependencies, measured);
    record.estimatedInputTokens = estimateTokensFromText(measured.textLength);
    const result = openAIEmbeddingsRequestSchema.safeParse(body);
    if (!result.success) {
      const problem = firstValidationProblem(result.error.issues);
      throw invalidRequest(problem.message, problem.param);
    }
    const deployment = resolveDeployment(dependencies, auth, result.data.model, 'embeddings', record);
    const admitted = admitRequest(dependencies, auth, record, 0);
    if (admitted !== undefined) await admitted;
    const { translator, target } = deployment;
    const native =
      translator.nativeDialects.includes('openai-embeddings') && translator.buildNativeRequest !== undefined;
    let upstreamRequest;
    if (native) {
      upstreamRequest = translator.buildNativeRequest!('openai-embeddings', { ...body, model: target.model }, target);
    } else if (translator.buildEmbeddingsRequest !== undefined && translator.parseEmbeddingsResponse !== undefined) {
      upstreamRequest = await translator.buildEmbeddingsRequest(openAIEmbeddingsToCanonical(result.data), target);
    } else {
      throw invalidRequest(
        `The model \`${result.data.model}\` does not support embeddings.`,
        'model',
        'unsupported_operation',
      );
    }
    const response = await callDeployment(dependencies, deployment, upstreamRequest, request.signal, record);
    const text = await readUpstreamText(response, dependencies, deployment, record);
    if (native) {
      // Same dialect: the (often large) vectors go through unparsed once checked; only the usage object is read.
      record.usage = checkedOpenAIAnswer(text, target.providerName, dependencies.redactor);
      return jsonResponse(dependencies, record, text);
    }
    const answer = parseUpstreamAnswer(text, target.providerName, dependencies.jsonLimits);
    const canonical = translator.parseEmbeddingsResponse!(answer);
    record.usage = canonical.usage;
    return jsonResponse(dependencies, record, JSON.stringify(renderOpenAIEmbeddingsResponse(canonical)));
  };
}
