import type { CanonicalChatRequest, UpstreamRequest, UpstreamTarget } from '../../src/canonical/index.ts';
import { GatewayError } from '../../src/errors.ts';
import {
  buildGeminiGenerateContentBody,
  readGeminiOptions,
  validateGeminiOptions,
  type GeminiGenerateContentBody,
} from '../gemini/index.ts';
import { vertexAccessToken, type VertexCredentialDependencies } from './vertex-credentials.ts';
import { readVertexOptions, validateVertexOptions, vertexProviderId } from './vertex-options.ts';
import { vertexHeaders, vertexModelUrl } from './vertex-url.ts';

/** The body of Vertex's `generateContent`: Gemini's, plus Vertex's request `labels`. */
export interface VertexGenerateContentBody extends GeminiGenerateContentBody {
  labels?: Record<string, string>;
}

/**
 * Whether a Vertex model id is Anthropic's (served by `publishers/anthropic`, the `vertex-anthropic` translator) rather
 * than Google's: Vertex's Claude ids all start with `claude-` (`claude-sonnet-4-5@20250929`).
 *
 * @example
 * isVertexAnthropicModel('claude-haiku-4-5@20251001'); // true
 * isVertexAnthropicModel('gemini-2.5-flash'); // false
 */
export function isVertexAnthropicModel(model: string): boolean {
  return model.startsWith('claude-');
}

/**
 * Builds Vertex's `POST .../publishers/google/models/{model}:generateContent` (or `:streamGenerateContent?alt=sse`)
 * for a Gemini model. The body is the Gemini translator's own (`buildGeminiGenerateContentBody`, read with the
 * deployment's Gemini options: `safetySettings`, `thinkingControl`, `sendPenalties`), which Vertex takes as it is:
 * roles, `systemInstruction`, `parametersJsonSchema`, `responseJsonSchema`, `thinkingConfig` and `fileData` URLs
 * (`https:` and `gs:`) are spelled the same. What Vertex adds is sent too: the deployment's `labels` (Vertex's
 * per-request billing labels). The credential is an OAuth bearer token (see `vertex-credentials.ts`), never a key in
 * `x-goog-api-key`.
 *
 * A Claude model on this translator is a 500 naming the `vertex-anthropic` provider: it would only be answered 404
 * under `publishers/google`.
 *
 * @example
 * const upstream = await buildVertexGeminiChatRequest(request, {
 *   providerName: 'vertex', baseURL: 'https://aiplatform.googleapis.com', model: 'gemini-2.5-flash',
 *   apiKey: undefined, headers: {}, options: { project: 'my-project', location: 'europe-west4', serviceAccount },
 * });
 * // upstream.url === 'https://europe-west4-aiplatform.googleapis.com/v1/projects/my-project/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent'
 */
export async function buildVertexGeminiChatRequest(
  request: CanonicalChatRequest,
  target: UpstreamTarget,
  dependencies: VertexCredentialDependencies = {},
): Promise<UpstreamRequest> {
  const options = readVertexOptions(target.options);
  if (isVertexAnthropicModel(target.model)) {
    throw new GatewayError({
      status: 500,
      type: 'api_error',
      code: 'invalid_provider_options',
      provider: vertexProviderId,
      message: `The gateway's Vertex deployment of ${target.model} uses the Gemini translator; Claude models on Vertex need the vertex-anthropic provider.`,
    });
  }
  const body: VertexGenerateContentBody = buildGeminiGenerateContentBody(
    request,
    target.model,
    readGeminiOptions(target.options, vertexProviderId),
  );
  if (options.labels !== undefined && Object.keys(options.labels).length > 0) body.labels = options.labels;
  const accessToken = await vertexAccessToken(target, dependencies);
  return {
    url: request.stream
      ? vertexModelUrl(target, options, 'google', 'streamGenerateContent', 'alt=sse')
      : vertexModelUrl(target, options, 'google', 'generateContent'),
    method: 'POST',
    headers: vertexHeaders(target, accessToken),
    body: JSON.stringify(body),
  };
}

/**
 * The problems of a Vertex Gemini deployment's options: Vertex's own (project, location, credentials, labels) and
 * the Gemini body's (`safetySettings`, `thinkingControl`, `sendPenalties`).
 *
 * @example
 * validateVertexGeminiOptions({ project: 'p', location: 'us-central1', thinkingControl: 'tokens' }); // ['thinkingControl: ...']
 */
export function validateVertexGeminiOptions(options: Record<string, unknown>): string[] {
  return [...validateVertexOptions(options), ...validateGeminiOptions(options)];
}
