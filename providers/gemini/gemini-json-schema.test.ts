import { describe, expect, it } from 'vitest';
import { toGeminiJsonSchema, toGeminiParametersSchema } from './gemini-json-schema.ts';

describe('toGeminiJsonSchema', () => {
  it('keeps the documented keywords and drops the others, at every depth, keeping property names', () => {
    expect(
      toGeminiJsonSchema({
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        additionalProperties: false,
        required: ['pattern'],
        properties: {
          pattern: { type: 'string', pattern: '^a', minLength: 1, description: 'A property named like a keyword' },
          count: { type: 'integer', exclusiveMinimum: 0, minimum: 1, multipleOf: 2 },
          tags: { type: 'array', items: { type: 'string', format: 'email', examples: ['a@b'] }, uniqueItems: true },
          either: { anyOf: [{ type: 'string' }, { type: 'null', default: null }] },
        },
      }),
    ).toEqual({
      type: 'object',
      additionalProperties: false,
      required: ['pattern'],
      properties: {
        pattern: { type: 'string', description: 'A property named like a keyword' },
        count: { type: 'integer', minimum: 1 },
        tags: { type: 'array', items: { type: 'string', format: 'email' } },
        either: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      },
    });
  });

  it('turns const into enum, definitions into $defs, and keeps only $ keywords beside $ref', () => {
    expect(
      toGeminiJsonSchema({
        type: 'object',
        properties: {
          unit: { const: 'celsius' },
          home: { $ref: '#/definitions/Address', description: 'dropped beside $ref' },
          work: { allOf: [{ $ref: '#/definitions/Address' }], description: 'dropped too' },
        },
        definitions: { Address: { type: 'object', properties: { street: { type: 'string', maxLength: 80 } } } },
      }),
    ).toEqual({
      type: 'object',
      properties: {
        unit: { enum: ['celsius'] },
        home: { $ref: '#/$defs/Address' },
        work: { $ref: '#/$defs/Address' },
      },
      $defs: { Address: { type: 'object', properties: { street: { type: 'string' } } } },
    });
  });

  it('drops an allOf of several schemas, and does not modify its input', () => {
    const input = { type: 'object', allOf: [{ required: ['a'] }, { required: ['b'] }] };
    expect(toGeminiJsonSchema(input)).toEqual({ type: 'object' });
    expect(input.allOf).toHaveLength(2);
  });

  it('gives tool parameters an object type when they name none', () => {
    expect(toGeminiParametersSchema({})).toEqual({ type: 'object' });
    expect(toGeminiParametersSchema({ type: 'object', properties: {} })).toEqual({ type: 'object', properties: {} });
  });
});
