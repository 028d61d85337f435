/**
 * A quick yes-or-don't-know answer to "does this body satisfy {@link openAIChatRequestSchema}?" for the shape most
 * chat requests have: text messages and scalar sampling options. `true` means the schema accepts the body as it is
 * (the schema has no transforms or defaults, so the body is its own parsed value); `false` means "ask the schema",
 * which also produces the error message. It never says `true` for a body the schema rejects: a differential test
 * holds it to that over the fuzz corpus.
 *
 * Why: the full schema walk costs several microseconds per request, a tenth of the gateway's own time.
 */

type Check = (value: unknown) => boolean;

const isNullish = (value: unknown): boolean => value === undefined || value === null;
const nullish =
  (check: Check): Check =>
  (value) =>
    isNullish(value) || check(value);
const isBoolean: Check = (value) => typeof value === 'boolean';
const isString: Check = (value) => typeof value === 'string';
const numberBetween =
  (lowest: number, highest: number): Check =>
  (value) =>
    typeof value === 'number' && value >= lowest && value <= highest;
const integerBetween =
  (lowest: number, highest: number): Check =>
  (value) =>
    Number.isSafeInteger(value) && (value as number) >= lowest && (value as number) <= highest;
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const reasoningEfforts = new Set(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']);

/** The top-level fields this check can vouch for; any other known field sends the body to the schema. */
const scalarFields = new Map<string, Check>(
  Object.entries({
    model: (value) => typeof value === 'string' && value.length > 0,
    stream: nullish(isBoolean),
    stream_options: nullish(
      (value) => isRecord(value) && (value.include_usage === undefined || isBoolean(value.include_usage)),
    ),
    max_tokens: nullish(integerBetween(1, Number.MAX_SAFE_INTEGER)),
    max_completion_tokens: nullish(integerBetween(1, Number.MAX_SAFE_INTEGER)),
    temperature: nullish(numberBetween(0, 2)),
    top_p: nullish(numberBetween(0, 1)),
    n: nullish(integerBetween(1, 128)),
    seed: nullish(integerBetween(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)),
    user: isString,
    presence_penalty: nullish(numberBetween(-2, 2)),
    frequency_penalty: nullish(numberBetween(-2, 2)),
    logprobs: nullish(isBoolean),
    top_logprobs: nullish(integerBetween(0, 20)),
    parallel_tool_calls: isBoolean,
    reasoning_effort: nullish((value) => typeof value === 'string' && reasoningEfforts.has(value)),
  } satisfies Record<string, Check>),
);

/** Known fields with nested shapes (tools, response_format, ...): present means "ask the schema". */
const schemaOnlyFields = new Set(['stop', 'logit_bias', 'tools', 'tool_choice', 'response_format']);

const textRoles = new Set(['system', 'developer', 'user', 'assistant']);

/** A message of the form `{ role, content: string, name? }` for the system, developer, user or assistant role. */
function isPlainTextMessage(message: unknown): boolean {
  if (!isRecord(message)) return false;
  if (typeof message.role !== 'string' || !textRoles.has(message.role)) return false;
  if (typeof message.content !== 'string') return false;
  for (const key in message) {
    if (key === 'role' || key === 'content') continue;
    if (key === 'name') {
      if (typeof message.name !== 'string') return false;
      continue;
    }
    // tool_calls, refusal and the like have shapes of their own: the schema decides.
    return false;
  }
  return true;
}

/**
 * `true` when `body` certainly satisfies the OpenAI chat request schema; `false` when the schema must decide.
 *
 * @example
 * const chat = isPlainOpenAIChatRequest(body) ? (body as OpenAIChatRequest) : validateWithSchema(body);
 */
export function isPlainOpenAIChatRequest(body: Record<string, unknown>): boolean {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return false;
  for (const message of messages) if (!isPlainTextMessage(message)) return false;
  if (typeof body.model !== 'string') return false;
  for (const key in body) {
    if (key === 'messages') continue;
    const check = scalarFields.get(key);
    if (check !== undefined) {
      if (!check(body[key])) return false;
    } else if (schemaOnlyFields.has(key)) {
      return false;
    }
  }
  return true;
}
