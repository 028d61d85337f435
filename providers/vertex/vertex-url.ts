import type { UpstreamTarget } from '../../src/canonical/index.ts';
import type { VertexOptions } from './vertex-options.ts';

/**
 * The base URL a Vertex preset gives its deployments: Google's own endpoint. With it, the host follows the
 * deployment's `location` (see {@link vertexHost}); any other base URL (a proxy, a Private Service Connect endpoint,
 * a test's mock server) is used as it is, followed by `/v1/projects/...`.
 */
export const vertexDefaultBaseURL = 'https://aiplatform.googleapis.com';

/** The publishers whose models the Vertex translators call. */
export type VertexPublisher = 'google' | 'anthropic';

/**
 * The Vertex host for a location: `aiplatform.googleapis.com` for `global`, the multi-region hosts
 * `aiplatform.us.rep.googleapis.com` / `aiplatform.eu.rep.googleapis.com` for `us` / `eu`, and
 * `{location}-aiplatform.googleapis.com` for a region (`us-central1-aiplatform.googleapis.com`).
 *
 * @example
 * vertexHost('europe-west4'); // 'https://europe-west4-aiplatform.googleapis.com'
 */
export function vertexHost(location: string): string {
  if (location === 'global') return 'https://aiplatform.googleapis.com';
  if (location === 'us' || location === 'eu') return `https://aiplatform.${location}.rep.googleapis.com`;
  return `https://${location}-aiplatform.googleapis.com`;
}

/**
 * The URL of one model method: `{host}/v1/projects/{project}/locations/{location}/publishers/{publisher}/models/
 * {model}:{method}`, the host chosen by location unless the deployment's base URL is not Google's default. The model
 * name is percent-encoded as one path segment (Claude's `claude-sonnet-4-5@20250929` keeps its `@`).
 *
 * @example
 * vertexModelUrl(target, options, 'google', 'streamGenerateContent', 'alt=sse');
 * // 'https://us-central1-aiplatform.googleapis.com/v1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse'
 */
export function vertexModelUrl(
  target: UpstreamTarget,
  options: VertexOptions,
  publisher: VertexPublisher,
  method: string,
  query?: string,
  model: string = target.model,
): string {
  const base = target.baseURL === vertexDefaultBaseURL ? vertexHost(options.location) : target.baseURL;
  const modelSegment = encodeURIComponent(model).replace(/%40/g, '@');
  const path = `/v1/projects/${options.project}/locations/${options.location}/publishers/${publisher}/models/${modelSegment}:${method}`;
  return `${base}${path}${query === undefined ? '' : `?${query}`}`;
}

/**
 * The headers of a Vertex request: JSON, the bearer token, then the config's headers (lower-cased, so a configured
 * `Content-Type` replaces the default instead of doubling it).
 */
export function vertexHeaders(target: UpstreamTarget, accessToken: string): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    authorization: `Bearer ${accessToken}`,
  };
  for (const [name, value] of Object.entries(target.headers)) headers[name.toLowerCase()] = value;
  return headers;
}
