import * as z from 'zod/mini';
import { invalidRequest } from '../../errors.ts';
import { firstValidationProblem } from '../../validation/zod-issues.ts';

/**
 * The OpenAI Responses request (`POST /v1/responses`) as Codex, the OpenAI Agents SDK and the `openai` SDKs send it.
 * Strict about the types of the fields the gateway reads, tolerant of everything else: every object is loose, because
 * the body also passes byte for byte to native Responses upstreams and OpenAI adds fields, item types and tool types
 * constantly. Item, content part, tool and tool choice types the gateway does not know are accepted here and refused
 * only when a request must be translated for another provider (see `openai-responses-to-canonical.ts`). Optional
 * fields are nullish, as the SDKs type them (`?: T | null`).
 */

const nonEmptyString = z.string().check(z.minLength(1));

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An object of a type this schema does not list, known only by its string `type`. */
export type OpenAIResponsesUnknownObject = { type: string } & Record<string, unknown>;

/**
 * An object whose `type` is a string outside `knownTypes`. The check is on the whole object and aborts, so that a
 * malformed object of a known type is reported against its own schema, at its deepest field, rather than accepted.
 */
function unknownTypeSchema(knownTypes: ReadonlySet<string>, what: string) {
  return z.custom<OpenAIResponsesUnknownObject>(
    (value) => isObject(value) && typeof value.type === 'string' && !knownTypes.has(value.type),
    { message: `expected ${what}`, abort: true },
  );
}

const imageDetailSchema = z.nullish(z.enum(['auto', 'low', 'high', 'original']));

const inputTextPartSchema = z.looseObject({ type: z.literal('input_text'), text: z.string() });
const inputImagePartSchema = z.looseObject({
  type: z.literal('input_image'),
  image_url: z.nullish(z.string()),
  file_id: z.nullish(z.string()),
  detail: imageDetailSchema,
});
const inputFilePartSchema = z.looseObject({
  type: z.literal('input_file'),
  file_data: z.nullish(z.string()),
  file_url: z.nullish(z.string()),
  file_id: z.nullish(z.string()),
  filename: z.nullish(z.string()),
});
const outputTextPartSchema = z.looseObject({
  type: z.literal('output_text'),
  text: z.string(),
  annotations: z.nullish(z.array(z.unknown())),
});
const refusalPartSchema = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });

const knownMessagePartSchema = z.discriminatedUnion('type', [
  inputTextPartSchema,
  inputImagePartSchema,
  inputFilePartSchema,
  outputTextPartSchema,
  refusalPartSchema,
]);
const knownMessagePartTypes: ReadonlySet<string> = new Set([
  'input_text',
  'input_image',
  'input_file',
  'output_text',
  'refusal',
]);
const messagePartSchema = z.union([knownMessagePartSchema, unknownTypeSchema(knownMessagePartTypes, 'a content part')]);

const knownOutputPartSchema = z.discriminatedUnion('type', [
  inputTextPartSchema,
  inputImagePartSchema,
  inputFilePartSchema,
]);
const knownOutputPartTypes: ReadonlySet<string> = new Set(['input_text', 'input_image', 'input_file']);
const outputPartSchema = z.union([knownOutputPartSchema, unknownTypeSchema(knownOutputPartTypes, 'an output part')]);

/** A message item; `type: 'message'` may be left out (the SDKs' `EasyInputMessage`). */
const messageItemSchema = z.looseObject({
  type: z.optional(z.literal('message')),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string(), z.array(messagePartSchema)]),
  id: z.nullish(z.string()),
  status: z.nullish(z.string()),
});

const functionCallItemSchema = z.looseObject({
  type: z.literal('function_call'),
  call_id: nonEmptyString,
  name: nonEmptyString,
  arguments: z.string(),
  id: z.nullish(z.string()),
  status: z.nullish(z.string()),
});

const functionCallOutputItemSchema = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: nonEmptyString,
  output: z.union([z.string(), z.array(outputPartSchema)]),
  id: z.nullish(z.string()),
  status: z.nullish(z.string()),
});

const reasoningItemSchema = z.looseObject({
  type: z.literal('reasoning'),
  id: z.nullish(z.string()),
  summary: z.array(z.looseObject({ type: z.literal('summary_text'), text: z.string() })),
  encrypted_content: z.nullish(z.string()),
});

const itemReferenceSchema = z.looseObject({ type: z.literal('item_reference'), id: nonEmptyString });

const knownItemSchema = z.discriminatedUnion('type', [
  messageItemSchema,
  functionCallItemSchema,
  functionCallOutputItemSchema,
  reasoningItemSchema,
  itemReferenceSchema,
]);

/** An item reference sent without `type` (or with `type: null`), as the SDKs allow: `{id}` and no `role`. */
export type OpenAIResponsesUntypedReference = { id: string; type?: null } & Record<string, unknown>;

const untypedReferenceSchema = z.custom<OpenAIResponsesUntypedReference>(
  (value) =>
    isObject(value) &&
    (value.type === undefined || value.type === null) &&
    value.role === undefined &&
    typeof value.id === 'string' &&
    value.id.length > 0,
  { message: 'expected an input item', abort: true },
);

const knownItemTypes: ReadonlySet<string> = new Set([
  'message',
  'function_call',
  'function_call_output',
  'reasoning',
  'item_reference',
]);

/** Schema of one input item (also used to read the stored items of a `previous_response_id` chain). */
export const openAIResponsesInputItemSchema = z.union([
  knownItemSchema,
  untypedReferenceSchema,
  unknownTypeSchema(knownItemTypes, 'an input item'),
]);

const functionToolSchema = z.looseObject({
  type: z.literal('function'),
  name: z.string().check(z.minLength(1), z.maxLength(128)),
  description: z.nullish(z.string()),
  parameters: z.nullish(z.record(z.string(), z.unknown())),
  strict: z.nullish(z.boolean()),
});

/** A built-in tool (`web_search`, `file_search`, `mcp`, `custom` ...): any `type` but `function`. */
const builtInToolSchema = unknownTypeSchema(new Set(['function']), 'a tool');

const toolChoiceSchema = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.literal('function'), name: nonEmptyString }),
  unknownTypeSchema(new Set(['function']), 'a tool choice'),
]);

const textFormatSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    name: z.string().check(z.minLength(1), z.maxLength(64)),
    schema: z.record(z.string(), z.unknown()),
    strict: z.nullish(z.boolean()),
    description: z.nullish(z.string()),
  }),
]);

const metadataSchema = z
  .record(z.string().check(z.maxLength(64)), z.string().check(z.maxLength(512)))
  .check(z.refine((metadata) => Object.keys(metadata).length <= 16, { message: 'at most 16 keys are allowed' }));

/** Schema of `POST /v1/responses` bodies. */
export const openAIResponsesRequestSchema = z.looseObject({
  model: nonEmptyString,
  input: z.optional(z.union([z.string(), z.array(openAIResponsesInputItemSchema)])),
  instructions: z.nullish(z.string()),
  stream: z.nullish(z.boolean()),
  store: z.nullish(z.boolean()),
  previous_response_id: z.nullish(nonEmptyString),
  tools: z.nullish(z.array(z.union([functionToolSchema, builtInToolSchema]))),
  tool_choice: z.nullish(toolChoiceSchema),
  parallel_tool_calls: z.nullish(z.boolean()),
  text: z.nullish(
    z.looseObject({
      format: z.nullish(textFormatSchema),
      verbosity: z.nullish(z.enum(['low', 'medium', 'high'])),
    }),
  ),
  reasoning: z.nullish(
    z.looseObject({
      // `max` is in the SDK's ReasoningEffort beside the values the canonical request has.
      effort: z.nullish(z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'])),
      summary: z.nullish(z.enum(['auto', 'concise', 'detailed'])),
    }),
  ),
  max_output_tokens: z.nullish(z.int().check(z.positive())),
  temperature: z.nullish(z.number().check(z.gte(0), z.lte(2))),
  top_p: z.nullish(z.number().check(z.gte(0), z.lte(1))),
  metadata: z.nullish(metadataSchema),
  user: z.nullish(z.string()),
  safety_identifier: z.nullish(z.string()),
  prompt_cache_key: z.nullish(z.string()),
  truncation: z.nullish(z.enum(['auto', 'disabled'])),
  include: z.nullish(z.array(z.string())),
});

/** A validated OpenAI Responses request. */
export type OpenAIResponsesRequest = z.infer<typeof openAIResponsesRequestSchema>;
/** One validated input item (a message, a function call or its output, a reasoning item, a reference, or another). */
export type OpenAIResponsesInputItem = z.infer<typeof openAIResponsesInputItemSchema>;
/** An input item of a type the gateway reads. */
export type OpenAIResponsesKnownItem = z.infer<typeof knownItemSchema>;
/** A message item (`type` `message` or left out). */
export type OpenAIResponsesMessageItem = z.infer<typeof messageItemSchema>;
/** One content part of a message item. */
export type OpenAIResponsesMessagePart = z.infer<typeof messagePartSchema>;
/** A message content part of a type the gateway reads. */
export type OpenAIResponsesKnownMessagePart = z.infer<typeof knownMessagePartSchema>;
/** One content part of a `function_call_output` item's `output`. */
export type OpenAIResponsesOutputPart = z.infer<typeof outputPartSchema>;
/** An output content part of a type the gateway reads. */
export type OpenAIResponsesKnownOutputPart = z.infer<typeof knownOutputPartSchema>;
/** One entry of `tools`. */
export type OpenAIResponsesTool = NonNullable<OpenAIResponsesRequest['tools']>[number];
/** A function tool. */
export type OpenAIResponsesFunctionTool = z.infer<typeof functionToolSchema>;

/**
 * An input item's type with the defaults the API applies: `message` for an item without `type` that has a `role`,
 * `item_reference` for one without either.
 */
export function responsesItemType(item: OpenAIResponsesInputItem): string {
  if (item.type !== undefined && item.type !== null) return item.type;
  return 'role' in item ? 'message' : 'item_reference';
}

/** Whether an input item is a message, function call or output, reasoning item or typed reference (narrows it). */
export function isKnownResponsesItem(item: OpenAIResponsesInputItem): item is OpenAIResponsesKnownItem {
  if (item.type === undefined || item.type === null) return 'role' in item;
  return knownItemTypes.has(item.type);
}

/** Whether a message content part is of a type the gateway reads (narrows it for a `switch` on `type`). */
export function isKnownResponsesMessagePart(part: OpenAIResponsesMessagePart): part is OpenAIResponsesKnownMessagePart {
  return knownMessagePartTypes.has(part.type);
}

/** Whether a `function_call_output` part is of a type the gateway reads (narrows it). */
export function isKnownResponsesOutputPart(part: OpenAIResponsesOutputPart): part is OpenAIResponsesKnownOutputPart {
  return knownOutputPartTypes.has(part.type);
}

/** Whether a tool is a function tool rather than a built-in one. */
export function isResponsesFunctionTool(tool: OpenAIResponsesTool): tool is OpenAIResponsesFunctionTool {
  return tool.type === 'function';
}

/**
 * Validates a parsed `POST /v1/responses` body; a violation throws a 400 naming the deepest offending field
 * (`input.[2].content.[0].text`). Unknown fields are kept, so the result can also be relayed as it came.
 *
 * @example
 * const request = validateOpenAIResponsesRequest({ model: 'gpt-5', input: 'Hello' });
 */
export function validateOpenAIResponsesRequest(body: Record<string, unknown>): OpenAIResponsesRequest {
  const result = openAIResponsesRequestSchema.safeParse(body);
  if (!result.success) {
    const problem = firstValidationProblem(result.error.issues);
    throw invalidRequest(problem.message, problem.param);
  }
  return result.data;
}

/**
 * The request's input as a list of items, as the gateway stores it and serves it from
 * `GET /v1/responses/{id}/input_items`: a string input becomes one user message with an `input_text` part, message
 * items without `type` get `type: 'message'`, item references without one get `type: 'item_reference'`; every item
 * is otherwise kept as sent. No input is an empty list.
 *
 * @example
 * responsesInputItems(validateOpenAIResponsesRequest({ model: 'gpt-5', input: 'Hi' }));
 * // [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }]
 */
export function responsesInputItems(request: OpenAIResponsesRequest): Record<string, unknown>[] {
  const input = request.input;
  if (input === undefined) return [];
  if (typeof input === 'string')
    return [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
  return input.map((item): Record<string, unknown> => {
    if (item.type !== undefined && item.type !== null) return item;
    const { type: _type, ...fields } = item;
    return { type: responsesItemType(item), ...fields };
  });
}
