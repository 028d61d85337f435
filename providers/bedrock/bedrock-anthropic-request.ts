import type {
  CanonicalChatRequest,
  ClientDialectId,
  UpstreamRequest,
  UpstreamTarget,
} from '../../src/canonical/index.ts';
import { buildAnthropicChatRequest } from '../anthropic/index.ts';
import { bedrockBaseURL, bedrockCredentials, readBedrockOptions } from './bedrock-options.ts';
import { bedrockModelURL, lowerCased } from './bedrock-request.ts';
import { authorizeBedrockRequest } from './bedrock-signing.ts';
import { rejectUrlSources } from '../anthropic/anthropic-request-messages.ts';

/**
 * The `anthropic_version` body field Claude's Messages API on Bedrock's InvokeModel requires ("The value must be
 * bedrock-2023-05-31", AWS's Anthropic Claude Messages API page).
 */
export const bedrockAnthropicVersion = 'bedrock-2023-05-31';

/**
 * Headers of Anthropic's own API that mean nothing to Bedrock: the version and beta flags travel in the body
 * (`anthropic_version`, `anthropic_beta`), and the key is replaced by AWS credentials.
 */
const anthropicOnlyHeaders = new Set(['anthropic-version', 'anthropic-beta', 'x-api-key']);

/**
 * Builds Bedrock's InvokeModel request for Claude (`POST /model/{modelId}/invoke`, or `invoke-with-response-stream`
 * for a stream, an AWS binary event stream whose `chunk`s carry Anthropic's own stream events) from a canonical chat
 * request. The body is Anthropic's Messages request, built by the Anthropic translator's own builder (everything it
 * translates, and refuses, holds here), then rewritten the way Bedrock wants it (see
 * {@link toBedrockAnthropicBody}): no `model` (it is in the URL) and no `stream` (the endpoint says it),
 * `anthropic_version: "bedrock-2023-05-31"`, and a configured `anthropic-beta` header as the `anthropic_beta` list.
 * The endpoint, region and credentials are the Bedrock translator's (SigV4 with the options' access keys, or a
 * Bedrock API key), and the exact body sent is signed.
 *
 * Of the deployment's options only `defaultMaxTokens` reaches the Anthropic builder (`max_tokens` when the client set
 * none; its default is Anthropic's 4096, since Claude requires one). Images and files given by URL are a 400: Claude on
 * Bedrock takes base64 sources only, and a translator fetches nothing itself.
 *
 * @example
 * const upstream = await buildBedrockAnthropicChatRequest(request, {
 *   providerName: 'bedrock-anthropic', baseURL: '', model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
 *   apiKey: undefined, headers: {}, options: { region: 'us-east-1', accessKeyId: 'AKIA...', secretAccessKey: '...' },
 * });
 * // upstream.url === 'https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke'
 */
export async function buildBedrockAnthropicChatRequest(
  request: CanonicalChatRequest,
  target: UpstreamTarget,
): Promise<UpstreamRequest> {
  const options = readBedrockOptions(target.options);
  rejectUrlSources(request, 'Bedrock');
  const anthropic = buildAnthropicChatRequest(request, {
    ...target,
    apiKey: undefined,
    headers: {},
    options: options.defaultMaxTokens === undefined ? {} : { defaultMaxTokens: options.defaultMaxTokens },
  });
  const body = JSON.parse(anthropic.body ?? '{}') as Record<string, unknown>;
  return toInvokeRequest(body, target, {});
}

/**
 * Builds the InvokeModel request for an Anthropic Messages client's own body (same-dialect pass-through, so Claude
 * Code and Anthropic's SDKs reach Claude on Bedrock), with the same rewrite as {@link buildBedrockAnthropicChatRequest}:
 * the body's `model` (the core has set the upstream's) moves into the URL, its `stream` flag picks
 * `invoke-with-response-stream` over `invoke`, the client's `anthropic-beta` header becomes `anthropic_beta` (the
 * config's `anthropic-beta` header, when it sets one, replaces the client's, as config headers do), and the client's
 * `anthropic-version` header is dropped for the body's `anthropic_version`. Anything else in the body goes as the
 * client sent it. Only `anthropic-messages` is served: Bedrock's token counting is another API (`CountTokens`).
 *
 * @example
 * const upstream = await buildBedrockAnthropicNativeRequest('anthropic-messages',
 *   { model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', max_tokens: 1024, messages, stream: true }, target,
 *   { 'anthropic-beta': 'context-1m-2025-08-07' });
 * // upstream.url ends with '/invoke-with-response-stream'; its body has anthropic_beta: ['context-1m-2025-08-07']
 */
export async function buildBedrockAnthropicNativeRequest(
  dialect: ClientDialectId,
  body: Record<string, unknown>,
  target: UpstreamTarget,
  clientHeaders: Readonly<Record<string, string>> = {},
): Promise<UpstreamRequest> {
  if (dialect !== 'anthropic-messages') throw new Error(`bedrock-anthropic cannot pass through ${dialect}`);
  return toInvokeRequest(body, target, lowerCased({ ...clientHeaders }));
}

/**
 * The body Bedrock's InvokeModel takes for Claude, from an Anthropic Messages body: `model` and `stream` removed
 * (Bedrock refuses them: "extraneous key [stream] is not permitted"), `anthropic_version` added unless the body has
 * one, and the beta flags given (an `anthropic-beta` header's comma-separated values) added to the body's own
 * `anthropic_beta`, each once. Exported for tests.
 *
 * @example
 * toBedrockAnthropicBody({ model: 'claude', max_tokens: 10, messages: [], stream: true }, ['interleaved-thinking-2025-05-14']);
 * // { max_tokens: 10, messages: [], anthropic_version: 'bedrock-2023-05-31', anthropic_beta: ['interleaved-thinking-2025-05-14'] }
 */
export function toBedrockAnthropicBody(
  body: Record<string, unknown>,
  betas: readonly string[],
): Record<string, unknown> {
  const { model: _model, stream: _stream, ...bedrockBody } = body;
  if (typeof bedrockBody.anthropic_version !== 'string') bedrockBody.anthropic_version = bedrockAnthropicVersion;
  const ownBetas = Array.isArray(bedrockBody.anthropic_beta)
    ? bedrockBody.anthropic_beta.filter((beta): beta is string => typeof beta === 'string')
    : [];
  const allBetas = [...new Set([...ownBetas, ...betas])];
  if (allBetas.length > 0) bedrockBody.anthropic_beta = allBetas;
  return bedrockBody;
}

/** The beta flags of an `anthropic-beta` header value (`a,b`, spaces allowed). */
export function parseAnthropicBetaHeader(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((beta) => beta.trim())
    .filter((beta) => beta.length > 0);
}

/**
 * The signed InvokeModel request of an Anthropic Messages body. `clientHeaders` (lower-cased) are read for
 * `anthropic-beta` only; the config's headers are sent (signed) except Anthropic's own, whose `anthropic-beta` wins
 * over the client's.
 */
async function toInvokeRequest(
  body: Record<string, unknown>,
  target: UpstreamTarget,
  clientHeaders: Record<string, string>,
): Promise<UpstreamRequest> {
  const options = readBedrockOptions(target.options);
  const baseURL = bedrockBaseURL(target, options);
  const credentials = bedrockCredentials(target, options, baseURL);
  const configHeaders = lowerCased(target.headers);
  const betas = parseAnthropicBetaHeader(configHeaders['anthropic-beta'] ?? clientHeaders['anthropic-beta']);
  const model = typeof body.model === 'string' && body.model.length > 0 ? body.model : target.model;
  const stream = body.stream === true;

  const headers: Record<string, string> = stream
    ? {
        'content-type': 'application/json',
        accept: 'application/vnd.amazon.eventstream',
        // InvokeModelWithResponseStream's `accept` member: the MIME type of each chunk's model output.
        'x-amzn-bedrock-accept': 'application/json',
      }
    : { 'content-type': 'application/json', accept: 'application/json' };
  for (const [name, value] of Object.entries(configHeaders)) {
    if (!anthropicOnlyHeaders.has(name)) headers[name] = value;
  }
  return authorizeBedrockRequest(
    {
      url: bedrockModelURL(baseURL, model, stream ? 'invoke-with-response-stream' : 'invoke'),
      headers,
      body: JSON.stringify(toBedrockAnthropicBody(body, betas)),
    },
    credentials,
  );
}
