/**
 * How a client's JSON Schema (tool parameters, a `json_schema` response format) reaches Gemini.
 *
 * Gemini takes a schema in two forms: `parameters` / `responseSchema`, an OpenAPI 3.0 `Schema` message (upper-case
 * types, no `$ref`, no `additionalProperties`, and a proto parser that answers 400 "Unknown name" for any keyword it
 * lacks), and `parametersJsonSchema` / `responseJsonSchema`, a JSON Schema carried as a free-form value. The gateway
 * sends the JSON Schema form: clients already write JSON Schema, it keeps `$ref`/`$defs`, `anyOf`, nullable type
 * lists and `additionalProperties`, which the OpenAPI form cannot express, and the Gemini API and Vertex AI take it on
 * every current model (2.5 and later).
 *
 * Google documents the subset it honours (GenerationConfig.responseJsonSchema, https://ai.google.dev/api/generate-content):
 * `$id`, `$defs`, `$ref`, `$anchor`, `type`, `format`, `title`, `description`, `enum`, `items`, `prefixItems`,
 * `minItems`, `maxItems`, `minimum`, `maximum`, `anyOf`, `oneOf` (read as `anyOf`), `properties`,
 * `additionalProperties`, `required`, and the non-standard `propertyOrdering`; a sub-schema with `$ref` may carry no
 * other keyword but `$`-prefixed ones. The gateway applies this rule, deterministically, to every sub-schema
 * (`properties` values, `items`, `prefixItems`, `anyOf`, `oneOf`, `$defs`, `additionalProperties`):
 *
 * 1. `const: v` becomes `enum: [v]` (unless the schema has an `enum` already);
 * 2. draft-07 `definitions` become `$defs`, and `$ref`s of the form `#/definitions/...` are rewritten to
 *    `#/$defs/...` (zod-to-json-schema and older Pydantic emit `definitions`);
 * 3. an `allOf` of exactly one sub-schema is merged into its parent (the parent's own keywords win); a longer `allOf`
 *    is dropped, since Gemini has no intersection;
 * 4. a sub-schema holding `$ref` keeps only its `$`-prefixed keywords (a description beside a `$ref` is dropped);
 * 5. every other keyword outside the list above is dropped (`$schema`, `default`, `examples`, `pattern`,
 *    `minLength`, `exclusiveMinimum`, `multipleOf`, `uniqueItems`, `not`, `if`/`then`/`else`, `patternProperties` ...).
 *    These are constraints Gemini would not enforce anyway; dropping them keeps a request Google could refuse from
 *    ever reaching it. Property names are data, not keywords, and are kept whatever they are.
 *
 * The tool parameters' root additionally gets `type: "object"` when it names no type (Gemini requires the parameters
 * to describe an object).
 */

/** The JSON Schema keywords Gemini documents as supported, see the module comment. */
const supportedKeywords = new Set([
  '$id',
  '$defs',
  '$ref',
  '$anchor',
  'type',
  'format',
  'title',
  'description',
  'enum',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'anyOf',
  'oneOf',
  'properties',
  'additionalProperties',
  'required',
  'propertyOrdering',
]);

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Converts a JSON Schema to the subset Gemini documents for `parametersJsonSchema` and `responseJsonSchema`, by the
 * rule in this module's comment. Pure: the input is not modified.
 *
 * @example
 * toGeminiJsonSchema({ type: 'object', properties: { unit: { const: 'C', default: 'C' } }, $schema: '...' });
 * // { type: 'object', properties: { unit: { enum: ['C'] } } }
 */
export function toGeminiJsonSchema(schema: Record<string, unknown>): Record<string, unknown> {
  return convertSchema(schema);
}

/**
 * A tool's parameter schema for `parametersJsonSchema`: {@link toGeminiJsonSchema}, with `type: "object"` added at
 * the root when the client named no type.
 *
 * @example
 * toGeminiParametersSchema({ properties: { city: { type: 'string' } } });
 * // { type: 'object', properties: { city: { type: 'string' } } }
 */
export function toGeminiParametersSchema(parameters: Record<string, unknown>): Record<string, unknown> {
  const converted = convertSchema(parameters);
  return converted.type === undefined ? { type: 'object', ...converted } : converted;
}

function convertSchema(input: JsonObject): JsonObject {
  const schema = inlineSingleAllOf(input);
  if (typeof schema.$ref === 'string') {
    const reference: JsonObject = {};
    for (const [key, value] of Object.entries(schema)) {
      if (key.startsWith('$') && supportedKeywords.has(key)) reference[key] = convertKeyword(key, value);
    }
    return reference;
  }
  const output: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'const') {
      if (schema.enum === undefined) output.enum = [value];
    } else if (key === 'definitions') {
      if (schema.$defs === undefined && isObject(value)) output.$defs = convertSchemaMap(value);
    } else if (supportedKeywords.has(key)) {
      output[key] = convertKeyword(key, value);
    }
  }
  return output;
}

/** An `allOf` of one sub-schema merged into its parent (the parent's keywords win); longer ones are dropped. */
function inlineSingleAllOf(schema: JsonObject): JsonObject {
  if (!('allOf' in schema)) return schema;
  const { allOf, ...rest } = schema;
  if (Array.isArray(allOf) && allOf.length === 1 && isObject(allOf[0])) return { ...allOf[0], ...rest };
  return rest;
}

function convertKeyword(key: string, value: unknown): unknown {
  switch (key) {
    case 'properties':
    case '$defs':
      return isObject(value) ? convertSchemaMap(value) : value;
    case 'items':
    case 'additionalProperties':
      return isObject(value) ? convertSchema(value) : value;
    case 'prefixItems':
    case 'anyOf':
    case 'oneOf':
      return Array.isArray(value) ? value.map((item) => (isObject(item) ? convertSchema(item) : item)) : value;
    case '$ref':
      return typeof value === 'string' && value.startsWith('#/definitions/')
        ? `#/$defs/${value.slice('#/definitions/'.length)}`
        : value;
    default:
      return value;
  }
}

function convertSchemaMap(map: JsonObject): JsonObject {
  const output: JsonObject = {};
  for (const [name, value] of Object.entries(map)) output[name] = isObject(value) ? convertSchema(value) : value;
  return output;
}
