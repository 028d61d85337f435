import * as z from 'zod/mini';
import { invalidRequest } from '../../errors.ts';
import { firstValidationProblem } from '../../validation/zod-issues.ts';

/**
 * The Anthropic Messages request (`POST /v1/messages`) as clients such as Claude Code and `@anthropic-ai/sdk` send it.
 * Strict about the types of the fields the gateway reads, tolerant of everything else: every object is loose, because
 * the body also passes byte for byte to Anthropic upstreams and Anthropic adds fields (and block and tool types)
 * constantly. Block types the gateway does not know are accepted here and refused only when a request must be
 * translated for another provider (see `anthropic-messages-to-canonical.ts`).
 */

const nonEmptyString = z.string().check(z.minLength(1));

const cacheControlSchema = z.nullish(z.looseObject({ type: z.string() }));

const textBlockSchema = z.looseObject({
  type: z.literal('text'),
  text: z.string(),
  cache_control: cacheControlSchema,
  citations: z.nullish(z.array(z.looseObject({ type: z.string() }))),
});

/** A Files API reference (`{type:'file', file_id}`), which only Anthropic can resolve. */
const fileSourceSchema = z.looseObject({ type: z.literal('file'), file_id: z.string() });

const imageSourceSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('base64'), media_type: nonEmptyString, data: z.string() }),
  z.looseObject({ type: z.literal('url'), url: nonEmptyString }),
  fileSourceSchema,
]);

const imageBlockSchema = z.looseObject({
  type: z.literal('image'),
  source: imageSourceSchema,
  cache_control: cacheControlSchema,
});

const documentSourceSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('base64'), media_type: nonEmptyString, data: z.string() }),
  z.looseObject({ type: z.literal('url'), url: nonEmptyString }),
  z.looseObject({ type: z.literal('text'), media_type: z.literal('text/plain'), data: z.string() }),
  z.looseObject({
    type: z.literal('content'),
    content: z.union([z.string(), z.array(z.discriminatedUnion('type', [textBlockSchema, imageBlockSchema]))]),
  }),
  fileSourceSchema,
]);

const documentBlockSchema = z.looseObject({
  type: z.literal('document'),
  source: documentSourceSchema,
  title: z.nullish(z.string()),
  context: z.nullish(z.string()),
  citations: z.nullish(z.looseObject({ enabled: z.optional(z.boolean()) })),
  cache_control: cacheControlSchema,
});

/** A content block of a type the gateway does not read, known only by its `type`. */
export type AnthropicUnknownContentBlock = { type: string } & Record<string, unknown>;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A block of a type this schema does not list (`server_tool_use`, `web_search_tool_result`, `search_result`,
 * `container_upload` ...). The check is on the whole block and aborts, so that a malformed known block (a `text`
 * block without `text`) is reported against the known block's schema, at its deepest field, rather than accepted.
 */
function unknownBlockSchema(knownTypes: ReadonlySet<string>) {
  return z.custom<AnthropicUnknownContentBlock>(
    (value) => isObject(value) && typeof value.type === 'string' && !knownTypes.has(value.type),
    { message: 'expected a content block', abort: true },
  );
}

const toolResultContentBlockSchema = z.discriminatedUnion('type', [
  textBlockSchema,
  imageBlockSchema,
  documentBlockSchema,
]);
const toolResultContentBlockTypes: ReadonlySet<string> = new Set(['text', 'image', 'document']);

const toolResultBlockSchema = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: nonEmptyString,
  content: z.nullish(
    z.union([
      z.string(),
      z.array(z.union([toolResultContentBlockSchema, unknownBlockSchema(toolResultContentBlockTypes)])),
    ]),
  ),
  is_error: z.nullish(z.boolean()),
  cache_control: cacheControlSchema,
});

const knownContentBlockSchema = z.discriminatedUnion('type', [
  textBlockSchema,
  imageBlockSchema,
  documentBlockSchema,
  z.looseObject({
    type: z.literal('tool_use'),
    id: nonEmptyString,
    name: nonEmptyString,
    input: z.record(z.string(), z.unknown()),
    cache_control: cacheControlSchema,
  }),
  toolResultBlockSchema,
  z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() }),
  z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() }),
]);

/** The content block types the gateway reads; any other `type` is an {@link AnthropicUnknownContentBlock}. */
export const anthropicKnownContentBlockTypes: ReadonlySet<string> = new Set([
  'text',
  'image',
  'document',
  'tool_use',
  'tool_result',
  'thinking',
  'redacted_thinking',
]);

const contentBlockSchema = z.union([knownContentBlockSchema, unknownBlockSchema(anthropicKnownContentBlockTypes)]);

const messageSchema = z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(contentBlockSchema)]),
});

/** A custom (client-run) tool: no `type`, or `type: 'custom'`. */
const customToolSchema = z.looseObject({
  type: z.optional(z.literal('custom')),
  name: nonEmptyString,
  description: z.nullish(z.string()),
  input_schema: z.record(z.string(), z.unknown()),
  strict: z.nullish(z.boolean()),
  cache_control: cacheControlSchema,
});

/** An Anthropic server tool (`web_search_20250305`, `bash_20250124`, `code_execution_20250825` ...): Anthropic runs it. */
export type AnthropicServerTool = { type: string; name?: string } & Record<string, unknown>;

/** Checked as a whole (like unknown blocks), so that a custom tool's own problem is the one reported. */
const serverToolSchema = z.custom<AnthropicServerTool>(
  (value) =>
    isObject(value) &&
    typeof value.type === 'string' &&
    value.type !== 'custom' &&
    (value.name === undefined || typeof value.name === 'string'),
  { message: 'expected a tool', abort: true },
);

const toolChoiceSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.enum(['auto', 'any', 'none']), disable_parallel_tool_use: z.nullish(z.boolean()) }),
  z.looseObject({ type: z.literal('tool'), name: nonEmptyString, disable_parallel_tool_use: z.nullish(z.boolean()) }),
]);

const thinkingSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('enabled'), budget_tokens: z.int().check(z.gte(1024)) }),
  z.looseObject({ type: z.enum(['disabled', 'adaptive', 'between_tools']) }),
]);

const jsonOutputFormatSchema = z.looseObject({
  type: z.literal('json_schema'),
  schema: z.record(z.string(), z.unknown()),
});

const outputConfigSchema = z.looseObject({
  effort: z.nullish(z.enum(['low', 'medium', 'high', 'xhigh', 'max'])),
  format: z.nullish(jsonOutputFormatSchema),
});

/** The fields `POST /v1/messages` and `POST /v1/messages/count_tokens` share. */
const conversationShape = {
  model: nonEmptyString,
  messages: z.array(messageSchema).check(z.minLength(1)),
  system: z.nullish(z.union([z.string(), z.array(textBlockSchema)])),
  tools: z.nullish(z.array(z.union([customToolSchema, serverToolSchema]))),
  tool_choice: z.nullish(toolChoiceSchema),
  thinking: z.nullish(thinkingSchema),
  output_config: z.nullish(outputConfigSchema),
  /** The structured-outputs beta's spelling of `output_config.format`. */
  output_format: z.nullish(jsonOutputFormatSchema),
};

/** Schema of `POST /v1/messages` bodies. */
export const anthropicMessagesRequestSchema = z.looseObject({
  ...conversationShape,
  max_tokens: z.int().check(z.positive()),
  stream: z.nullish(z.boolean()),
  temperature: z.nullish(z.number().check(z.gte(0), z.lte(1))),
  top_p: z.nullish(z.number().check(z.gte(0), z.lte(1))),
  top_k: z.nullish(z.int().check(z.gte(0))),
  stop_sequences: z.nullish(z.array(z.string())),
  metadata: z.nullish(z.looseObject({ user_id: z.nullish(z.string()) })),
});

/** Schema of `POST /v1/messages/count_tokens` bodies: a Messages request without `max_tokens` and sampling. */
export const anthropicCountTokensRequestSchema = z.looseObject(conversationShape);

/** A validated Anthropic Messages request. */
export type AnthropicMessagesRequest = z.infer<typeof anthropicMessagesRequestSchema>;
/** A validated Anthropic count-tokens request. */
export type AnthropicCountTokensRequest = z.infer<typeof anthropicCountTokensRequestSchema>;
/** One validated message (`user` or `assistant` turn). */
export type AnthropicMessage = z.infer<typeof messageSchema>;
/** A content block of a type the gateway reads. */
export type AnthropicKnownContentBlock = z.infer<typeof knownContentBlockSchema>;
/** One content block of a message. */
export type AnthropicContentBlock = AnthropicKnownContentBlock | AnthropicUnknownContentBlock;
/** An image block (in a message, a tool result or a `content` document). */
export type AnthropicImageBlock = z.infer<typeof imageBlockSchema>;
/** A document block. */
export type AnthropicDocumentBlock = z.infer<typeof documentBlockSchema>;
/** A `tool_result` block. */
export type AnthropicToolResultBlock = z.infer<typeof toolResultBlockSchema>;
/** A block of a type the gateway reads inside a `tool_result`'s content (text, image, document). */
export type AnthropicToolResultContentBlock = z.infer<typeof toolResultContentBlockSchema>;
/** One entry of `tools`. */
export type AnthropicTool = NonNullable<AnthropicMessagesRequest['tools']>[number];
/** A custom (client-run) tool. */
export type AnthropicCustomTool = z.infer<typeof customToolSchema>;

/** Whether a content block is of a type the gateway reads (narrows the block for a `switch` on its `type`). */
export function isKnownAnthropicBlock(block: AnthropicContentBlock): block is AnthropicKnownContentBlock {
  return anthropicKnownContentBlockTypes.has(block.type);
}

/** Whether a block inside a `tool_result`'s content is of a type the gateway reads there. */
export function isKnownToolResultContentBlock(
  block: AnthropicToolResultContentBlock | AnthropicUnknownContentBlock,
): block is AnthropicToolResultContentBlock {
  return toolResultContentBlockTypes.has(block.type);
}

/** Whether a tool is a custom tool rather than an Anthropic server tool. */
export function isAnthropicCustomTool(tool: AnthropicTool): tool is AnthropicCustomTool {
  return tool.type === undefined || tool.type === 'custom';
}

/**
 * Validates a parsed `POST /v1/messages` body; a violation throws a 400 naming the deepest offending field
 * (`messages.[2].content.[0].source`). Unknown fields are kept, so the result can also be relayed as it came.
 *
 * @example
 * const request = validateAnthropicMessagesRequest({
 *   model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [{ role: 'user', content: 'Hello' }],
 * });
 */
export function validateAnthropicMessagesRequest(body: Record<string, unknown>): AnthropicMessagesRequest {
  return validate(anthropicMessagesRequestSchema, body);
}

/**
 * Validates a parsed `POST /v1/messages/count_tokens` body like {@link validateAnthropicMessagesRequest}, without
 * requiring `max_tokens`.
 *
 * @example
 * const { model } = validateAnthropicCountTokensRequest({ model: 'claude-sonnet-4-5', messages: [user] });
 */
export function validateAnthropicCountTokensRequest(body: Record<string, unknown>): AnthropicCountTokensRequest {
  return validate(anthropicCountTokensRequestSchema, body);
}

function validate<Schema extends z.ZodMiniType>(schema: Schema, body: Record<string, unknown>): z.infer<Schema> {
  const result = schema.safeParse(body);
  if (!result.success) {
    const problem = firstValidationProblem(result.error.issues);
    throw invalidRequest(problem.message, problem.param);
  }
  return result.data;
}
