import {
  validateAnthropicCountTokensRequest,
  type AnthropicCountTokensRequest,
} from '../dialects/anthropic-messages/anthropic-messages-request-schema.ts';
import { countAnthropicInputTokensWith } from '../dialects/anthropic-messages/anthropic-messages-token-count.ts';
import { estimateAnthropicInputTokens } from '../dialects/anthropic-messages/anthropic-messages-token-estimate.ts';
import { isGatewayError } from '../errors.ts';
import { parseJson } from '../framing/parse-json.ts';
import type { GatewayContext } from '../gateway-environment.ts';
import type { ResolvedDeployment } from '../routing/resolved-deployment.ts';
import { authenticateRequest } from './authenticate-request.ts';
import { callDeployment, readUpstreamText } from './call-upstream.ts';
import { createThrottledErrorLog, type ThrottledErrorLog } from './error-log-throttle.ts';
import type { RouteDependencies } from './gateway-context.ts';
import { jsonResponse } from './gateway-responses.ts';
import { readJsonObjectBody } from './read-json-body.ts';
import { admitRequest } from './request-accounting.ts';
import { resolveModelGroup } from './resolve-route.ts';
import { pickHeaders } from './forwarded-headers.ts';
import { anthropicMessagesDialect } from '../dialects/anthropic-messages/anthropic-messages-dialect.ts';

/**
 * `POST /v1/messages/count_tokens`: forwarded to deployments that count natively (Anthropic); for the others counted
 * by the gateway, exactly with the runtime's tokenizer when it has one for the upstream model (the Node adapter's
 * gpt-tokenizer for OpenAI models, see GatewayServices.tokenCounter), marked `x-torii-token-count: tokenizer:<encoding>`,
 * otherwise by its estimate (see estimateAnthropicInputTokens), marked `x-torii-token-count: estimate`. It never fails
 * in a way that stops a client: a request the upstream refuses as invalid (400, 413) is answered with the upstream's
 * error, but an upstream that is down, slow, rate-limited or does not know the endpoint, and a tokenizer that fails,
 * get the estimate instead. Counting takes a request from the key's rate limit like any call, and is not a ledger
 * entry (it costs nothing).
 */
export function createCountTokensHandler(dependencies: RouteDependencies) {
  // A tokenizer that cannot load fails every count: one log line a minute says so.
  const logCounterError = createThrottledErrorLog(dependencies.services.logger, dependencies.services.now, 60_000);
  return async (c: GatewayContext): Promise<Response> => {
    const record = c.var.record;
    record.operation = 'count_tokens';
    record.clientApi = 'anthropic-count-tokens';
    record.errorDialect = 'anthropic';
    const raw = c.req.raw;
    const auth = await authenticateRequest(dependencies, raw, record);
    const body = await readJsonObjectBody(raw, dependencies);
    const request = validateAnthropicCountTokensRequest(body);
    const group = resolveModelGroup(dependencies, auth, request.model, 'chat', record);
    const admitted = admitRequest(dependencies, auth, record, 0);
    if (admitted !== undefined) await admitted;
    // One deployment the group's strategy picks among those not cooling down; counting says nothing of its health.
    const choice = dependencies.router.choose(group, 'chat', new Set());
    const deployment = choice?.runtime.deployment ?? (group.deployments[0] as ResolvedDeployment);
    if (choice !== undefined) dependencies.router.finish(choice, { verdict: { kind: 'neutral' } });
    record.deployment = deployment;
    record.provider = deployment.target.providerName;
    const { translator, target } = deployment;
    const countLocally = async (): Promise<Response> => {
      const counted = await countInputTokensLocally(dependencies, logCounterError, body, request, target.model);
      const response = jsonResponse(dependencies, record, JSON.stringify({ input_tokens: counted.inputTokens }));
      response.headers.set('x-torii-token-count', counted.method);
      return response;
    };
    if (choice === undefined || !deployment.nativeDialects.has('anthropic-count-tokens')) return await countLocally();
    const headers = pickHeaders(raw.headers, anthropicMessagesDialect.forwardedHeaders);
    // resolveModelGroups admits native dialects only for translators that build native requests.
    const upstreamRequest = await translator.buildNativeRequest!(
      'anthropic-count-tokens',
      { ...body, model: target.model },
      target,
      headers,
    );
    try {
      const response = await callDeployment(dependencies, deployment, upstreamRequest, raw.signal, record);
      const text = await readUpstreamText(response, dependencies, deployment, record);
      const parsed = parseJson(text);
      const counted = parsed.ok ? (parsed.value as { input_tokens?: unknown } | null)?.input_tokens : undefined;
      if (typeof counted !== 'number' || !Number.isFinite(counted) || counted < 0) return await countLocally();
      return jsonResponse(dependencies, record, JSON.stringify({ input_tokens: Math.round(counted) }));
    } catch (error) {
      if (raw.signal.aborted) throw error;
      if (isGatewayError(error) && (error.status === 400 || error.status === 413)) throw error;
      return await countLocally();
    }
  };
}

/**
 * The count with the runtime's tokenizer for the upstream model, or the estimate when there is none, the request
 * cannot be translated, or the counter fails (logged, throttled) or counts nonsense.
 */
async function countInputTokensLocally(
  dependencies: RouteDependencies,
  logCounterError: ThrottledErrorLog,
  body: Record<string, unknown>,
  request: AnthropicCountTokensRequest,
  model: string,
): Promise<{ inputTokens: number; method: string }> {
  const counter = dependencies.services.tokenCounter;
  if (counter !== undefined) {
    try {
      const tokenizer = await counter.tokenizerFor(model);
      if (tokenizer !== undefined) {
        const inputTokens = countAnthropicInputTokensWith(request, tokenizer);
        if (inputTokens !== undefined && Number.isSafeInteger(inputTokens) && inputTokens >= 0)
          return { inputTokens, method: `tokenizer:${tokenizer.encoding}` };
      }
    } catch (error) {
      logCounterError('warn', 'token_counter_failed', 'The token counter failed; count_tokens answered the estimate', {
        model,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return { inputTokens: estimateAnthropicInputTokens(body), method: 'estimate' };
}
