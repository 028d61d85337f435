/**
 * How OpenAI's `response_format` reaches Anthropic.
 *
 * Anthropic's native structured outputs (`output_config.format`, and `strict` on tools) exist only on recent models
 * and not on every Anthropic-compatible upstream (Vertex AI and Bedrock roll them out model by model). So by
 * default the gateway uses the approach that works on every Claude model: a forced tool. The request gains one tool,
 * {@link jsonResponseToolName}, whose input schema is the requested JSON schema (`{type:"object"}` for
 * `json_object`), and `tool_choice` forces it. When the client also sent tools, `auto`/`required` become `any` (call
 * one of the client's tools, or answer through the JSON tool), a named tool stays forced, and `none` forces the JSON
 * tool (the client's tools stay declared: Anthropic needs them for `tool_use` blocks in the history). The
 * response and stream readers turn that tool call back into the assistant's text, so the client sees plain JSON
 * content with finish reason `stop`, exactly as from OpenAI. Forced tool use is incompatible with extended thinking,
 * so `reasoning_effort` together with a JSON `response_format` is a 400 in this mode. A streamed JSON answer keeps
 * Anthropic's spacing; the non-streamed one is re-serialised compactly (same value, different whitespace).
 *
 * A deployment whose upstream supports structured outputs sets `options.structuredOutputs: "native"`; then
 * `json_schema` goes out as `output_config.format` (constrained decoding; works together with extended thinking),
 * and tools keep their `strict` flag. `json_object` has no native form and always uses the tool.
 */

/**
 * The reserved tool name that carries a JSON answer. Prefixed so it cannot collide with a client's tool; the reader
 * recognises it without knowing the request, which keeps the translator stateless.
 */
export const jsonResponseToolName = 'torii_json_response';

/** The description the model sees for the JSON response tool when the schema brings none. */
export const jsonResponseToolDescription =
  'Respond to the user with a JSON object that follows this schema. Put the entire answer in this tool call.';
