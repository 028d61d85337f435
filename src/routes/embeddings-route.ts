import {
  openAIEmbeddingsToCanonical,
  renderOpenAIEmbeddingsResponse,
} from '../dialects/openai-embeddings/openai-embeddings-convert.ts';
import { openAIEmbeddingsRequestSchema } from '../dialects/openai-embeddings/openai-embeddings-request-schema.ts';
import { usageFromOpenAIText } from '../dialects/openai-chat/openai-usage-from-text.ts';
import { GatewayError, invalidRequest } from '../errors.ts';
import { parseJson } from '../framing/parse-json.ts';
import { firstValidationProblem } from '../validation/zod-issues.ts';
import { authenticateRequest } from './authenticate-request.ts';
import { callUpstream, readUpstreamText } from './call-upstream.ts';
import type { GatewayContext, RouteDependencies } from './gateway-context.ts';
import { readJsonObjectBody } from './read-json-body.ts';
import { resolveDeployment } from './resolve-route.ts';
import { withTimingHeaders } from './timing-headers.ts';

/** `POST /v1/embeddings`: passed through to OpenAI-compatible upstreams, translated for the others. */
export function createEmbeddingsHandler(dependencies: RouteDependencies) {
  return async (c: GatewayContext): Promise<Response> => {
    const record = c.var.record;
    record.operation = 'embeddings';
    const request = c.req.raw;
    const auth = await authenticateRequest(dependencies, request);
    const body = await readJsonObjectBody(request, dependencies.bodyLimitBytes);
    const result = openAIEmbeddingsRequestSchema.safeParse(body);
    if (!result.success) {
      const problem = firstValidationProblem(result.error.issues);
      throw invalidRequest(problem.message, problem.param);
    }
    const { translator, target } = resolveDeployment(dependencies, auth, result.data.model, 'embeddings', record);
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
    const response = await callUpstream({
      services: dependencies.services,
      translator,
      providerName: target.providerName,
      request: upstreamRequest,
      clientSignal: request.signal,
      timeoutMs: dependencies.upstreamTimeoutMs,
      record,
    });
    const text = await readUpstreamText(response, dependencies.services, record);
    const parsed = parseJson(text);
    if (!parsed.ok) {
      throw new GatewayError({
        status: 502,
        type: 'upstream_error',
        code: 'upstream_invalid_response',
        provider: target.providerName,
        message: `Upstream ${target.providerName} sent a response that is not JSON: ${parsed.error}`,
      });
    }
    if (native) {
      record.usage = usageFromOpenAIText(text);
      return new Response(text, {
        status: 200,
        headers: withTimingHeaders(record, dependencies.services.now(), { 'content-type': 'application/json' }),
      });
    }
    const canonical = translator.parseEmbeddingsResponse!(parsed.value);
    record.usage = canonical.usage;
    return new Response(JSON.stringify(renderOpenAIEmbeddingsResponse(canonical)), {
      status: 200,
      headers: withTimingHeaders(record, dependencies.services.now(), { 'content-type': 'application/json' }),
    });
  };
}
