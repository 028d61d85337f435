import * as z from 'zod/mini';
import { GatewayError } from '../../src/errors.ts';
import { parseServiceAccount } from './vertex-service-account.ts';

/** The provider id Vertex errors carry. */
export const vertexProviderId = 'vertex';

/**
 * A Google Cloud project id (or number) as it stands in a Vertex URL path: letters, digits and `-._:` (legacy
 * domain-scoped projects are `example.com:project`), so it can never add a path segment or a query.
 */
const projectPattern = /^[A-Za-z0-9][A-Za-z0-9.:_-]*$/;

/** A Vertex location: a region (`us-central1`, `europe-west4`), a multi-region (`us`, `eu`) or `global`. */
const locationPattern = /^[a-z][a-z0-9-]*$/;

/** A Google Cloud label key: a lower-case letter, then up to 62 lower-case letters, digits, `_` and `-`. */
const labelKeyPattern = /^[\p{Ll}\p{Lo}][\p{Ll}\p{Lo}\p{N}_-]{0,62}$/u;

/** A Google Cloud label value: up to 63 lower-case letters, digits, `_` and `-`. */
const labelValuePattern = /^[\p{Ll}\p{Lo}\p{N}_-]{0,63}$/u;

/** The `task_type` values of Vertex's text-embedding models. */
export const vertexEmbeddingTaskTypes = [
  'RETRIEVAL_QUERY',
  'RETRIEVAL_DOCUMENT',
  'SEMANTIC_SIMILARITY',
  'CLASSIFICATION',
  'CLUSTERING',
  'QUESTION_ANSWERING',
  'FACT_VERIFICATION',
  'CODE_RETRIEVAL_QUERY',
] as const;

/**
 * The deployment options of the Vertex translators (`options` in the config):
 * - `project` (required): the Google Cloud project id;
 * - `location` (required): `us-central1`, `europe-west4` ..., `us`/`eu` (multi-region) or `global`;
 * - `serviceAccount`: a service-account key (the JSON object, or its JSON text) the gateway signs its own tokens
 *   with; or `accessToken`: an OAuth access token used as given (the deployment's `apiKey` serves as one too);
 * - `anthropicVersion`: Claude's `anthropic_version` body field (default `vertex-2023-10-16`);
 * - `defaultMaxTokens`, `structuredOutputs`: as for the Anthropic translator (Claude only);
 * - `labels`: Vertex request labels sent with every Gemini request (billing breakdowns);
 * - `embeddingTaskType`: the `task_type` of every text-embedding input (`RETRIEVAL_DOCUMENT`, `RETRIEVAL_QUERY` ...).
 */
export const vertexOptionsSchema = z.object({
  project: z.string().check(z.regex(projectPattern, 'must be a Google Cloud project id such as "my-project"')),
  location: z
    .string()
    .check(z.regex(locationPattern, 'must be a Vertex location such as "us-central1", "europe-west4" or "global"')),
  serviceAccount: z.optional(z.union([z.string(), z.record(z.string(), z.unknown())])),
  accessToken: z.optional(z.string().check(z.minLength(1))),
  anthropicVersion: z.optional(z.string().check(z.minLength(1))),
  defaultMaxTokens: z.optional(z.int().check(z.positive())),
  structuredOutputs: z.optional(z.enum(['tool', 'native'])),
  embeddingTaskType: z.optional(z.enum(vertexEmbeddingTaskTypes)),
  labels: z.optional(
    z.record(
      z
        .string()
        .check(
          z.regex(
            labelKeyPattern,
            'label keys start with a lower-case letter, then up to 62 lower-case letters, digits, "_" and "-"',
          ),
        ),
      z.string().check(z.regex(labelValuePattern, 'label values are up to 63 lower-case letters, digits, "_" and "-"')),
    ),
  ),
});

/** Parsed Vertex deployment options, see {@link vertexOptionsSchema}. */
export type VertexOptions = z.infer<typeof vertexOptionsSchema>;

/**
 * The problems of a Vertex deployment's options (`<option>: <reason>`), checked at start; empty when they are valid.
 * A service account is parsed here too (its JSON, its fields, the PEM framing of its key), so a broken key file fails
 * the start; whether the key's bytes are a valid RSA key is only known when Web Crypto imports it (first request).
 *
 * @example
 * validateVertexOptions({ project: 'my-project' }); // ['location: ...']
 */
export function validateVertexOptions(options: Record<string, unknown>): string[] {
  const parsed = vertexOptionsSchema.safeParse(options);
  if (!parsed.success) {
    return parsed.error.issues.map((issue) => `${issue.path.join('.') || '(options)'}: ${issue.message}`);
  }
  const problems: string[] = [];
  const { serviceAccount, accessToken } = parsed.data;
  if (serviceAccount !== undefined && accessToken !== undefined) {
    problems.push('serviceAccount: set either serviceAccount or accessToken, not both');
  }
  if (serviceAccount !== undefined) {
    const account = parseServiceAccount(serviceAccount);
    if (!account.ok) problems.push(`serviceAccount: ${account.problem}`);
  }
  return problems;
}

/** Reads the options of a request's target; a wrong value is a gateway configuration error (500), never the client's. */
export function readVertexOptions(options: Record<string, unknown>): VertexOptions {
  const parsed = vertexOptionsSchema.safeParse(options);
  if (parsed.success) return parsed.data;
  const fields = parsed.error.issues.map((issue) => issue.path.join('.') || '(options)').join(', ');
  throw new GatewayError({
    status: 500,
    type: 'api_error',
    code: 'invalid_provider_options',
    provider: vertexProviderId,
    message: `The gateway's Vertex deployment has invalid options: ${fields}.`,
  });
}
