import * as z from 'zod/mini';
import { GatewayError } from '../../src/errors.ts';

/**
 * The deployment options (`options` in the config) the Gemini translator reads; the Vertex AI translator reads the
 * same ones for the Gemini body:
 * - `safetySettings`: Gemini's `safetySettings` array (`[{category: "HARM_CATEGORY_HARASSMENT", threshold:
 *   "BLOCK_ONLY_HIGH"}]`), sent as given with every chat request; default none (Google's defaults).
 * - `thinkingControl`: how a reasoning effort is expressed: `"budget"` (`thinkingBudget`, Gemini 2.5), `"level"`
 *   (`thinkingLevel`, Gemini 3), or `"auto"` (the default): `level` for models named `gemini-3...` or later, else `budget`.
 * - `sendPenalties`: whether non-zero `presence_penalty`/`frequency_penalty` are sent. Default false: Gemini 2.5 and
 *   later answer any non-zero penalty with 400 "Penalty is not enabled for this model", and many OpenAI clients send
 *   penalties by habit; a deployment of a model that takes them (Gemini 2.0) sets true. Zero is never sent (a no-op).
 * - `embeddingTaskType`: the `taskType` of embeddings requests (`RETRIEVAL_DOCUMENT`, `RETRIEVAL_QUERY`,
 *   `SEMANTIC_SIMILARITY`, `CLASSIFICATION`, `CLUSTERING` ...); default none (Google's default). OpenAI's embeddings
 *   API has no such field, so it is the deployment's choice.
 */
export const geminiOptionsSchema = z.object({
  safetySettings: z.optional(z.array(z.object({ category: z.string(), threshold: z.string() }))),
  thinkingControl: z.optional(z.enum(['auto', 'budget', 'level'])),
  sendPenalties: z.optional(z.boolean()),
  embeddingTaskType: z.optional(z.string().check(z.regex(/^[A-Z_]+$/))),
});

/** Parsed deployment options, see {@link geminiOptionsSchema}. */
export type GeminiOptions = z.infer<typeof geminiOptionsSchema>;

/**
 * The problems of a deployment's options (`<option>: <reason>`), checked at start; empty when they are valid.
 *
 * @example
 * validateGeminiOptions({ thinkingControl: 'tokens' }); // ['thinkingControl: Invalid option: expected one of ...']
 */
export function validateGeminiOptions(options: Record<string, unknown>): string[] {
  const parsed = geminiOptionsSchema.safeParse(options);
  if (parsed.success) return [];
  return parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

/**
 * Reads a deployment's options for a request; invalid options (which the start-up check should have caught) are a
 * 500 naming them, since the gateway's configuration is at fault, not the client.
 *
 * @example
 * const options = readGeminiOptions(target.options, 'gemini');
 */
export function readGeminiOptions(options: Record<string, unknown>, provider = 'gemini'): GeminiOptions {
  const parsed = geminiOptionsSchema.safeParse(options);
  if (parsed.success) return parsed.data;
  const fields = parsed.error.issues.map((issue) => issue.path.join('.')).join(', ');
  throw new GatewayError({
    status: 500,
    type: 'api_error',
    code: 'invalid_provider_options',
    provider,
    message: `The gateway's Gemini deployment has invalid options: ${fields}.`,
  });
}
