import { Hono } from 'hono';
import type { UpstreamRequest } from '../canonical/provider-translator.ts';
import { invalidRequest } from '../errors.ts';
import type { GatewayContext, GatewayEnvironment } from '../gateway-environment.ts';
import type { StoredResponse } from '../responses/response-store.ts';
import { authenticateRequest } from './authenticate-request.ts';
import { callDeployment, readUpstreamText } from './call-upstream.ts';
import type { RouteDependencies } from './gateway-context.ts';
import { invalidUpstreamAnswer, jsonResponse } from './gateway-responses.ts';
import { checkOpenAIAnswer } from '../dialects/openai-chat/openai-answer-check.ts';
import { maxResponseIdLength, responseNotFound, responseOwner } from './responses-conversation.ts';
import { boundedStoreCall } from '../responses/response-store-access.ts';

/** The query parameters of `input_items` a native upstream is asked with, as the client sent them. */
const forwardedListParameters = ['limit', 'order', 'after', 'before', 'include'];

/** The caller's own stored response, or the 404 (missing, expired and another key's alike). */
async function ownResponse(dependencies: RouteDependencies, c: GatewayContext): Promise<StoredResponse> {
  const record = c.var.record;
  record.operation = 'responses';
  record.clientApi = 'openai-responses';
  const auth = await authenticateRequest(dependencies, c.req.raw, record);
  const id = c.req.param('id') ?? '';
  const store = dependencies.responseStore;
  if (id.length === 0 || id.length > maxResponseIdLength || store === undefined) throw responseNotFound(id);
  const stored = await boundedStoreCall(() => store.get(id));
  if (stored === undefined || stored.keyId !== responseOwner(auth)) throw responseNotFound(id);
  return stored;
}

/**
 * Asks the deployment a native response lives on (so the provider account that keeps it) for it: the same URL as
 * creating one, `/responses`, with the id and the sub-resource after it.
 */
async function askNativeDeployment(
  dependencies: RouteDependencies,
  c: GatewayContext,
  stored: StoredResponse,
  method: 'GET' | 'DELETE',
  suffix = '',
  query = '',
): Promise<Response> {
  const record = c.var.record;
  const [groupName] = stored.deploymentId.split('/');
  const deployment = dependencies.modelGroups
    .get(groupName ?? '')
    ?.deployments.find((candidate) => candidate.id === stored.deploymentId);
  // The config changed since: the deployment that keeps this response is gone.
  if (deployment === undefined || deployment.translator.buildNativeRequest === undefined) {
    throw responseNotFound(stored.id);
  }
  record.modelGroup = stored.modelGroup;
  record.deployment = deployment;
  record.provider = deployment.target.providerName;
  const create = await deployment.translator.buildNativeRequest('openai-responses', {}, deployment.target);
  const { 'content-type': _contentType, ...headers } = create.headers;
  const request: UpstreamRequest = {
    url: `${create.url}/${encodeURIComponent(stored.id)}${suffix}${query}`,
    method,
    headers,
    body: undefined,
  };
  const response = await callDeployment(dependencies, deployment, request, c.req.raw.signal, record);
  const text = await readUpstreamText(response, dependencies, deployment, record);
  const check = checkOpenAIAnswer(text);
  if (!check.ok) throw invalidUpstreamAnswer(deployment.target.providerName, check.reason);
  return jsonResponse(dependencies, record, text);
}

/** The `input_items` list parameters, checked as OpenAI checks them. */
function listParameters(url: URL): { limit: number; order: 'asc' | 'desc'; after: string | undefined } {
  const limitText = url.searchParams.get('limit');
  const limit = limitText === null ? 20 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw invalidRequest('limit must be a whole number from 1 to 100.', 'limit');
  }
  const order = url.searchParams.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw invalidRequest("order must be 'asc' or 'desc'.", 'order');
  return { limit, order, after: url.searchParams.get('after') ?? undefined };
}

/**
 * The stored-response routes of the Responses API: `GET /v1/responses/{id}`, `DELETE /v1/responses/{id}` and
 * `GET /v1/responses/{id}/input_items`. Only the key that created a response sees it; anyone else gets the same 404
 * as for an id that never existed. A response a native upstream keeps is fetched from (or deleted at) the deployment
 * that made it; one the gateway translated is served from the shared store.
 *
 * @example
 * app.route('/', createResponsesRoutes(dependencies));
 */
export function createResponsesRoutes(dependencies: RouteDependencies): Hono<GatewayEnvironment> {
  const app = new Hono<GatewayEnvironment>();

  app.get('/v1/responses/:id', async (c) => {
    const stored = await ownResponse(dependencies, c);
    if (stored.native) return askNativeDeployment(dependencies, c, stored, 'GET');
    if (c.req.query('stream') === 'true') {
      throw invalidRequest('Streaming a stored response again is not supported by this gateway.', 'stream');
    }
    return jsonResponse(dependencies, c.var.record, JSON.stringify(stored.response));
  });

  app.delete('/v1/responses/:id', async (c) => {
    const stored = await ownResponse(dependencies, c);
    const answer = stored.native ? await askNativeDeployment(dependencies, c, stored, 'DELETE') : undefined;
    const store = dependencies.responseStore;
    if (store !== undefined) await boundedStoreCall(() => store.delete(stored.id));
    return (
      answer ??
      jsonResponse(dependencies, c.var.record, JSON.stringify({ id: stored.id, object: 'response', deleted: true }))
    );
  });

  app.get('/v1/responses/:id/input_items', async (c) => {
    const stored = await ownResponse(dependencies, c);
    const url = new URL(c.req.url);
    if (stored.native) {
      const query = new URLSearchParams();
      for (const name of forwardedListParameters)
        for (const value of url.searchParams.getAll(name)) query.append(name, value);
      const text = query.toString();
      return askNativeDeployment(dependencies, c, stored, 'GET', '/input_items', text.length > 0 ? `?${text}` : '');
    }
    const { limit, order, after } = listParameters(url);
    const ordered = order === 'asc' ? [...stored.inputItems] : [...stored.inputItems].reverse();
    const afterIndex = after === undefined ? -1 : ordered.findIndex((item) => item.id === after);
    if (after !== undefined && afterIndex === -1)
      throw invalidRequest(`No input item '${after}' in this response.`, 'after');
    const start = afterIndex + 1;
    const data = ordered.slice(start, start + limit);
    return jsonResponse(
      dependencies,
      c.var.record,
      JSON.stringify({
        object: 'list',
        data,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
        has_more: start + limit < ordered.length,
      }),
    );
  });

  return app;
}
