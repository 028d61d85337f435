import * as z from 'zod/mini';
import type { UpstreamTarget } from '../../src/canonical/index.ts';
import { GatewayError } from '../../src/errors.ts';

/** The provider id errors from this translator carry. */
export const cohereProviderId = 'cohere';

/** The `input_type` sent with embeddings when the deployment sets none: OpenAI clients have no such field. */
export const defaultCohereEmbeddingInputType = 'search_document';

/**
 * The deployment options this translator reads from `target.options`:
 * - `embeddingInputType`: the `input_type` of every embeddings request (Cohere's v3 and newer embedding models
 *   require one; OpenAI clients cannot send it). Default {@link defaultCohereEmbeddingInputType}; a deployment that
 *   embeds search queries sets `search_query` (two deployments of the same model can serve both).
 * - `embeddingTruncate`: `truncate` for embeddings (`NONE`, `START`, `END`); Cohere's default (`END`) when unset.
 * - `safetyMode`: `safety_mode` for chat (`CONTEXTUAL`, `STRICT`, `OFF`); Cohere's default when unset.
 */
export const cohereOptionsSchema = z.object({
  embeddingInputType: z.optional(z.enum(['search_document', 'search_query', 'classification', 'clustering'])),
  embeddingTruncate: z.optional(z.enum(['NONE', 'START', 'END'])),
  safetyMode: z.optional(z.enum(['CONTEXTUAL', 'STRICT', 'OFF'])),
});

/** Parsed deployment options, see {@link cohereOptionsSchema}. */
export type CohereOptions = z.infer<typeof cohereOptionsSchema>;

/**
 * The problems of a deployment's options (`<option>: <reason>`), checked at start; empty when they are valid.
 *
 * @example
 * validateCohereOptions({ embeddingInputType: 'query' }); // ['embeddingInputType: Invalid option: ...']
 */
export function validateCohereOptions(options: Record<string, unknown>): string[] {
  const parsed = cohereOptionsSchema.safeParse(options);
  if (parsed.success) return [];
  return parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

/** Reads {@link CohereOptions}; a bad value is the gateway's configuration error (500), normally caught at start. */
export function readCohereOptions(options: Record<string, unknown>): CohereOptions {
  const parsed = cohereOptionsSchema.safeParse(options);
  if (parsed.success) return parsed.data;
  const fields = parsed.error.issues.map((issue) => issue.path.join('.')).join(', ');
  throw new GatewayError({
    status: 500,
    type: 'api_error',
    code: 'invalid_provider_options',
    provider: cohereProviderId,
    message: `The gateway's Cohere deployment has invalid options: ${fields}.`,
  });
}

/**
 * The request headers: JSON in, `accept` for the answer expected, the key as a bearer token, then the config's
 * headers (lower-cased so that a configured `Accept` replaces the default instead of doubling it).
 */
export function cohereHeaders(target: UpstreamTarget, accept: 'application/json' | 'text/event-stream') {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept };
  if (target.apiKey !== undefined) headers.authorization = `Bearer ${target.apiKey}`;
  for (const [name, value] of Object.entries(target.headers)) headers[name.toLowerCase()] = value;
  return headers;
}
