import * as z from 'zod/mini';
import type { UpstreamTarget } from '../../src/canonical/index.ts';
import { GatewayError } from '../../src/errors.ts';

/** An AWS region name (`us-east-1`, `eu-central-2`, `us-gov-west-1`, `ap-southeast-5`). */
const regionPattern = /^[a-z]{2}(-[a-z]+)+-\d+$/;

/**
 * The deployment options this translator reads from `target.options` (the config layer has already substituted
 * environment references such as `${AWS_ACCESS_KEY_ID}`):
 * - `region`: the AWS region; it names the default endpoint (`https://bedrock-runtime.{region}.amazonaws.com`) and
 *   the SigV4 credential scope. Without it, the region is read from a `bedrock-runtime.{region}.amazonaws.com` base URL.
 * - `accessKeyId`, `secretAccessKey`, `sessionToken`: IAM credentials for SigV4 signing (the session token only for
 *   temporary credentials). When they are absent, the deployment's `apiKey` is sent as a Bedrock API key
 *   (`Authorization: Bearer ...`, AWS's `AWS_BEARER_TOKEN_BEDROCK`).
 * - `defaultMaxTokens`: `inferenceConfig.maxTokens` when the client sent none (default: none, Bedrock's model default;
 *   with reasoning on, 4096 plus the thinking budget, see `bedrock-request.ts`).
 * - `embeddingInputType`: Cohere embed's `input_type` (default `search_document`); OpenAI's embeddings API has no
 *   such field, so a deployment serving queries sets `search_query`.
 */
export const bedrockOptionsSchema = z.object({
  region: z.optional(z.string().check(z.regex(regionPattern, 'must be an AWS region such as us-east-1'))),
  accessKeyId: z.optional(z.string().check(z.minLength(1))),
  secretAccessKey: z.optional(z.string().check(z.minLength(1))),
  sessionToken: z.optional(z.string().check(z.minLength(1))),
  defaultMaxTokens: z.optional(z.int().check(z.positive())),
  embeddingInputType: z.optional(z.enum(['search_document', 'search_query', 'classification', 'clustering'])),
});

/** Parsed deployment options, see {@link bedrockOptionsSchema}. */
export type BedrockOptions = z.infer<typeof bedrockOptionsSchema>;

/**
 * The problems of a deployment's options (`<option>: <reason>`), checked at start; empty when they are valid. Besides
 * each option's own shape, the two halves of an access key go together, and a session token needs them.
 *
 * @example
 * validateBedrockOptions({ region: 'us-east-1', accessKeyId: 'AKIA...' });
 * // ['secretAccessKey: required with accessKeyId']
 */
export function validateBedrockOptions(options: Record<string, unknown>): string[] {
  const parsed = bedrockOptionsSchema.safeParse(options);
  if (!parsed.success) return parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  const { accessKeyId, secretAccessKey, sessionToken } = parsed.data;
  const problems: string[] = [];
  if (accessKeyId !== undefined && secretAccessKey === undefined)
    problems.push('secretAccessKey: required with accessKeyId');
  if (secretAccessKey !== undefined && accessKeyId === undefined)
    problems.push('accessKeyId: required with secretAccessKey');
  if (sessionToken !== undefined && accessKeyId === undefined)
    problems.push('sessionToken: only meaningful with accessKeyId and secretAccessKey');
  return problems;
}

/** Reads the options at request time; invalid ones (which start-up validation should have caught) are a 500. */
export function readBedrockOptions(options: Record<string, unknown>): BedrockOptions {
  const parsed = bedrockOptionsSchema.safeParse(options);
  if (parsed.success) return parsed.data;
  const fields = parsed.error.issues.map((issue) => issue.path.join('.')).join(', ');
  throw configurationError(`The gateway's Bedrock deployment has invalid options: ${fields}.`);
}

/** How a request to one deployment is authenticated. */
export type BedrockCredentials =
  | { kind: 'sigv4'; accessKeyId: string; secretAccessKey: string; sessionToken?: string; region: string }
  | { kind: 'bearer'; apiKey: string };

/**
 * The runtime endpoint of a deployment: the config's base URL when it set one (a VPC endpoint, a proxy, a test
 * mock), else `https://bedrock-runtime.{region}.amazonaws.com`.
 *
 * @example
 * bedrockBaseURL({ ...target, baseURL: '' }, { region: 'eu-west-1' }); // 'https://bedrock-runtime.eu-west-1.amazonaws.com'
 */
export function bedrockBaseURL(target: UpstreamTarget, options: BedrockOptions): string {
  if (target.baseURL.length > 0) return target.baseURL.replace(/\/+$/, '');
  if (options.region === undefined) {
    throw configurationError(
      "The gateway's Bedrock deployment has neither a baseURL nor options.region: one of them names the endpoint.",
    );
  }
  return `https://bedrock-runtime.${options.region}.amazonaws.com`;
}

/**
 * The credentials a request is sent with: IAM access keys (SigV4) when the options carry them, else the deployment's
 * `apiKey` as a Bedrock API key (bearer). SigV4 needs a region: `options.region`, else the one in an AWS endpoint's
 * host name (`bedrock-runtime.{region}.amazonaws.com`, also `bedrock-runtime-fips.` and VPC endpoint names ending in
 * it).
 */
export function bedrockCredentials(
  target: UpstreamTarget,
  options: BedrockOptions,
  baseURL: string,
): BedrockCredentials {
  if (options.accessKeyId !== undefined && options.secretAccessKey !== undefined) {
    const region = options.region ?? regionOfEndpoint(baseURL);
    if (region === undefined) {
      throw configurationError(
        "The gateway's Bedrock deployment signs with access keys but has no options.region, and its baseURL names none.",
      );
    }
    return {
      kind: 'sigv4',
      accessKeyId: options.accessKeyId,
      secretAccessKey: options.secretAccessKey,
      ...(options.sessionToken === undefined ? {} : { sessionToken: options.sessionToken }),
      region,
    };
  }
  if (target.apiKey !== undefined && target.apiKey.length > 0) return { kind: 'bearer', apiKey: target.apiKey };
  throw configurationError(
    "The gateway's Bedrock deployment has no credentials: set options.accessKeyId and options.secretAccessKey " +
      '(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), or an apiKey holding a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK).',
  );
}

function regionOfEndpoint(baseURL: string): string | undefined {
  let host: string;
  try {
    host = new URL(baseURL).hostname;
  } catch {
    return undefined;
  }
  // `bedrock-runtime.us-east-1.amazonaws.com`, its FIPS and China forms, and a VPC endpoint's
  // `vpce-....bedrock-runtime.us-east-1.vpce.amazonaws.com`.
  const match = /bedrock-runtime(?:-fips)?\.([a-z]{2}(?:-[a-z]+)+-\d+)\.(?:vpce\.)?amazonaws\.com(?:\.cn)?$/.exec(host);
  return match?.[1];
}

function configurationError(message: string): GatewayError {
  return new GatewayError({
    status: 500,
    type: 'api_error',
    code: 'invalid_provider_options',
    provider: 'bedrock',
    message,
  });
}
