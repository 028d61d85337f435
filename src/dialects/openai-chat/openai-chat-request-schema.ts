import * as z from 'zod/mini';
import '../../validation/zod-issues.ts';

/**
 * The OpenAI chat completions request as clients send it. Strict about the types of the fields it knows, tolerant of
 * fields it does not (they pass through to OpenAI-compatible upstreams untouched, e.g. provider extensions).
 */

const textPartSchema = z.looseObject({ type: z.literal('text'), text: z.string() });
const imagePartSchema = z.looseObject({
  type: z.literal('image_url'),
  image_url: z.looseObject({
    url: z.string().check(z.minLength(1)),
    detail: z.optional(z.enum(['auto', 'low', 'high'])),
  }),
});
const audioPartSchema = z.looseObject({
  type: z.literal('input_audio'),
  input_audio: z.looseObject({ data: z.string(), format: z.string() }),
});
const filePartSchema = z.looseObject({ type: z.literal('file'), file: z.looseObject({}) });
const refusalPartSchema = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });

const userPartSchema = z.discriminatedUnion('type', [textPartSchema, imagePartSchema, audioPartSchema, filePartSchema]);
const textContentSchema = z.union([z.string(), z.array(textPartSchema)]);

const toolCallSchema = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

const systemMessageSchema = z.looseObject({
  role: z.enum(['system', 'developer']),
  content: textContentSchema,
  name: z.optional(z.string()),
});
const userMessageSchema = z.looseObject({
  role: z.literal('user'),
  content: z.union([z.string(), z.array(userPartSchema)]),
  name: z.optional(z.string()),
});
const assistantMessageSchema = z.looseObject({
  role: z.literal('assistant'),
  content: z.nullish(z.union([z.string(), z.array(z.discriminatedUnion('type', [textPartSchema, refusalPartSchema]))])),
  name: z.optional(z.string()),
  refusal: z.nullish(z.string()),
  tool_calls: z.nullish(z.array(toolCallSchema)),
});
const toolMessageSchema = z.looseObject({
  role: z.literal('tool'),
  content: textContentSchema,
  tool_call_id: z.string(),
});
const functionMessageSchema = z.looseObject({
  role: z.literal('function'),
  content: z.nullable(z.string()),
  name: z.string(),
});

const messageSchema = z.discriminatedUnion('role', [
  systemMessageSchema,
  userMessageSchema,
  assistantMessageSchema,
  toolMessageSchema,
  functionMessageSchema,
]);

const toolSchema = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().check(z.minLength(1), z.maxLength(64)),
    description: z.optional(z.string()),
    parameters: z.optional(z.record(z.string(), z.unknown())),
    strict: z.nullish(z.boolean()),
  }),
});

const toolChoiceSchema = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string() }) }),
]);

const responseFormatSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    json_schema: z.looseObject({
      name: z.string().check(z.minLength(1), z.maxLength(64)),
      description: z.optional(z.string()),
      schema: z.optional(z.record(z.string(), z.unknown())),
      strict: z.nullish(z.boolean()),
    }),
  }),
]);

const positiveInteger = z.int().check(z.positive());

/** Schema of `POST /v1/chat/completions` bodies. */
export const openAIChatRequestSchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  messages: z.array(messageSchema).check(z.minLength(1)),
  stream: z.nullish(z.boolean()),
  stream_options: z.nullish(z.looseObject({ include_usage: z.optional(z.boolean()) })),
  max_tokens: z.nullish(positiveInteger),
  max_completion_tokens: z.nullish(positiveInteger),
  temperature: z.nullish(z.number().check(z.gte(0), z.lte(2))),
  top_p: z.nullish(z.number().check(z.gte(0), z.lte(1))),
  n: z.nullish(z.int().check(z.gte(1), z.lte(128))),
  stop: z.nullish(z.union([z.string(), z.array(z.string()).check(z.maxLength(16))])),
  seed: z.nullish(z.int()),
  user: z.optional(z.string()),
  presence_penalty: z.nullish(z.number().check(z.gte(-2), z.lte(2))),
  frequency_penalty: z.nullish(z.number().check(z.gte(-2), z.lte(2))),
  logprobs: z.nullish(z.boolean()),
  top_logprobs: z.nullish(z.int().check(z.gte(0), z.lte(20))),
  logit_bias: z.nullish(z.record(z.string(), z.number())),
  tools: z.optional(z.array(toolSchema)),
  tool_choice: z.optional(toolChoiceSchema),
  parallel_tool_calls: z.optional(z.boolean()),
  response_format: z.optional(responseFormatSchema),
  reasoning_effort: z.nullish(z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh'])),
  /**
   * Not OpenAI's: documents for a provider that grounds answers in them (Cohere), sent with the SDK's extra body
   * parameters; each a text, or `{id?, data}` with the document's fields.
   */
  documents: z.optional(
    z
      .array(
        z.union([z.string(), z.looseObject({ id: z.optional(z.string()), data: z.record(z.string(), z.unknown()) })]),
      )
      .check(z.maxLength(1000)),
  ),
});

/** A validated OpenAI chat request. */
export type OpenAIChatRequest = z.infer<typeof openAIChatRequestSchema>;
/** One validated message of an OpenAI chat request. */
export type OpenAIChatMessage = z.infer<typeof messageSchema>;
