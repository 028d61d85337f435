import type {
  CanonicalChatRequest,
  ClientDialectId,
  UpstreamRequest,
  UpstreamTarget,
} from '../../src/canonical/index.ts';
import { buildAnthropicChatRequest } from '../anthropic/index.ts';
import { vertexAccessToken, type VertexCredentialDependencies } from './vertex-credentials.ts';
import { readVertexOptions, type VertexOptions } from './vertex-options.ts';
import { vertexHeaders, vertexModelUrl } from './vertex-url.ts';
import { rejectUrlSources } from '../anthropic/anthropic-request-messages.ts';

/** The `anthropic_version` body field Claude on Vertex needs, unless the deployment's `anthropicVersion` says otherwise. */
export const defaultVertexAnthropicVersion = 'vertex-2023-10-16';

/** The model name in the URL of Vertex's Claude token counting (`.../models/count-tokens:rawPredict`). */
const countTokensModel = 'count-tokens';

/**
 * Builds the Vertex request for Claude (`publishers/anthropic/models/{model}:rawPredict`, or `:streamRawPredict` for
 * a stream) from a canonical chat request, by building Anthropic's own Messages request with the Anthropic
 * translator's builder (everything it translates, and refuses, holds here) and rewriting it the way Vertex wants:
 * - no `model` in the body (it is in the URL), and `anthropic_version` in the body instead of the
 *   `anthropic-version` header (`options.anthropicVersion`, default `vertex-2023-10-16`);
 * - an OAuth bearer token instead of `x-api-key` (see `vertex-credentials.ts`);
 * - images and files given by URL are a 400: Vertex answers "URL sources are not supported" for Claude, and a
 *   translator fetches nothing itself; base64 `data:` URLs (and inline file bytes) go through.
 *
 * @example
 * const upstream = await buildVertexAnthropicChatRequest(request, {
 *   providerName: 'vertex-anthropic', baseURL: 'https://aiplatform.googleapis.com', model: 'claude-sonnet-4-5@20250929',
 *   apiKey: undefined, headers: {}, options: { project: 'my-project', location: 'us-east5', serviceAccount },
 * });
 * // upstream.url === 'https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict'
 */
export async function buildVertexAnthropicChatRequest(
  request: CanonicalChatRequest,
  target: UpstreamTarget,
  dependencies: VertexCredentialDependencies = {},
): Promise<UpstreamRequest> {
  const options = readVertexOptions(target.options);
  rejectUrlSources(request, 'Vertex AI');
  const anthropic = buildAnthropicChatRequest(request, {
    ...target,
    apiKey: undefined,
    headers: {},
    options: {
      ...(options.defaultMaxTokens === undefined ? {} : { defaultMaxTokens: options.defaultMaxTokens }),
      ...(options.structuredOutputs === undefined ? {} : { structuredOutputs: options.structuredOutputs }),
    },
  });
  const body = JSON.parse(anthropic.body ?? '{}') as Record<string, unknown>;
  const accessToken = await vertexAccessToken(target, dependencies);
  return toVertexAnthropicRequest('anthropic-messages', body, target, options, {}, accessToken);
}

/**
 * Builds the Vertex request for an Anthropic Messages client's own body (same-dialect pass-through), with the
 * access token already at hand: the same rewrite as {@link buildVertexAnthropicChatRequest} (`model` moved to the URL,
 * `anthropic_version` into the body, `:streamRawPredict` when the body asks for a stream), the client's
 * `anthropic-beta` kept as a header and its `anthropic-version` header dropped (the body carries the version). Token
 * counting goes to `count-tokens:rawPredict` with the model left in the body, as Vertex wants it.
 *
 * The seam's `buildNativeRequest` is synchronous while a service account's token is fetched asynchronously, so the
 * translator does not declare native dialects yet; {@link buildVertexAnthropicNativeRequestWithCredentials} is the
 * asynchronous form it would use.
 *
 * @example
 * const upstream = buildVertexAnthropicNativeRequest('anthropic-messages', { model: 'claude-sonnet-4-5@20250929', max_tokens: 1024, messages }, target, { 'anthropic-beta': 'context-1m-2025-08-07' }, token);
 * // upstream.url ends with '/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict'
 */
export function buildVertexAnthropicNativeRequest(
  dialect: ClientDialectId,
  body: Record<string, unknown>,
  target: UpstreamTarget,
  clientHeaders: Readonly<Record<string, string>>,
  accessToken: string,
): UpstreamRequest {
  return toVertexAnthropicRequest(dialect, body, target, readVertexOptions(target.options), clientHeaders, accessToken);
}

/**
 * {@link buildVertexAnthropicNativeRequest} with the deployment's access token fetched first (a given token, or the
 * service account's cached one): the shape the seam's `buildNativeRequest` needs once it may return a promise.
 *
 * @example
 * const upstream = await buildVertexAnthropicNativeRequestWithCredentials('anthropic-count-tokens', body, target);
 * // upstream.url ends with '/publishers/anthropic/models/count-tokens:rawPredict'
 */
export async function buildVertexAnthropicNativeRequestWithCredentials(
  dialect: ClientDialectId,
  body: Record<string, unknown>,
  target: UpstreamTarget,
  clientHeaders: Readonly<Record<string, string>> = {},
  dependencies: VertexCredentialDependencies = {},
): Promise<UpstreamRequest> {
  const options = readVertexOptions(target.options);
  const accessToken = await vertexAccessToken(target, dependencies);
  return toVertexAnthropicRequest(dialect, body, target, options, clientHeaders, accessToken);
}

function toVertexAnthropicRequest(
  dialect: ClientDialectId,
  body: Record<string, unknown>,
  target: UpstreamTarget,
  options: VertexOptions,
  clientHeaders: Readonly<Record<string, string>>,
  accessToken: string,
): UpstreamRequest {
  const vertexBody: Record<string, unknown> = { ...body };
  if (typeof vertexBody.anthropic_version !== 'string') {
    vertexBody.anthropic_version = options.anthropicVersion ?? defaultVertexAnthropicVersion;
  }
  let url: string;
  if (dialect === 'anthropic-count-tokens') {
    url = vertexModelUrl(target, options, 'anthropic', 'rawPredict', undefined, countTokensModel);
  } else if (dialect === 'anthropic-messages') {
    const model = typeof vertexBody.model === 'string' && vertexBody.model.length > 0 ? vertexBody.model : target.model;
    delete vertexBody.model;
    const method = vertexBody.stream === true ? 'streamRawPredict' : 'rawPredict';
    url = vertexModelUrl(target, options, 'anthropic', method, undefined, model);
  } else {
    throw new Error(`vertex-anthropic cannot pass through ${dialect}`);
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(clientHeaders)) {
    const lower = name.toLowerCase();
    if (lower !== 'anthropic-version') headers[lower] = value;
  }
  return {
    url,
    method: 'POST',
    headers: { ...headers, ...vertexHeaders(target, accessToken) },
    body: JSON.stringify(vertexBody),
  };
}
