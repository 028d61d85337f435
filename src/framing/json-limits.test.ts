import { describe, expect, it } from 'vitest';
import { defaultJsonLimits, findJsonLimitViolation, jsonLimitError, type JsonLimits } from './json-limits.ts';

const limits: JsonLimits = { maxDepth: 4, maxElements: 3 };
const check = (value: unknown, bounds: JsonLimits = limits) =>
  findJsonLimitViolation(typeof value === 'string' ? value : JSON.stringify(value), bounds);

/** `depth` arrays, one inside the other. */
const nestedArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('findJsonLimitViolation', () => {
  it('accepts an ordinary chat body under the default limits', () => {
    const body = {
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Hi [{' }] },
      ],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }],
    };
    expect(check(body, defaultJsonLimits)).toBeUndefined();
  });

  it('accepts nesting exactly at the limit and refuses one level more, naming the container', () => {
    expect(check({ a: { b: [[]] } })).toBeUndefined();
    expect(check({ a: { b: [[[]]] } })).toEqual({ kind: 'depth', container: 'array', param: 'a.b.[0].[0]', limit: 4 });
    expect(check({ a: [{ b: { c: {} } }] })).toEqual({
      kind: 'depth',
      container: 'object',
      param: 'a.[0].b.c',
      limit: 4,
    });
  });

  it('names the item a deep array sits at, and the member a deep object sits in', () => {
    expect(check({ x: 1, list: ['a', {}, [[[1]]]] })).toEqual({
      kind: 'depth',
      container: 'array',
      param: 'list.[2].[0].[0]',
      limit: 4,
    });
    expect(check({ first: { done: {} }, second: { inner: { deeper: { x: {} } } } })?.param).toBe(
      'second.inner.deeper.x',
    );
  });

  it('refuses deep arrays, deep objects and a mix of both as the document itself', () => {
    expect(check(nestedArrays(5))?.param).toBe('[0].[0].[0].[0]');
    expect(check('{"a":{"a":{"a":{"a":{}}}}}')?.param).toBe('a.a.a.a');
    expect(check('[{"a":[{"b":[]}]}]')?.param).toBe('[0].a.[0].b');
  });

  it('accepts as many items as the limit and refuses one more, in arrays and objects', () => {
    expect(check({ list: [1, 2, 3], map: { a: 1, b: 2, c: 3 } })).toBeUndefined();
    expect(check({ list: [1, 2, 3, 4] })).toEqual({ kind: 'elements', container: 'array', param: 'list', limit: 3 });
    expect(check({ nested: { map: { a: 1, b: 2, c: 3, d: 4 } } })).toEqual({
      kind: 'elements',
      container: 'object',
      param: 'nested.map',
      limit: 3,
    });
    expect(check({ a: 1, b: 2, c: 3, d: 4 })).toEqual({
      kind: 'elements',
      container: 'object',
      param: null,
      limit: 3,
    });
  });

  it('counts items per container: siblings and nested containers do not add up', () => {
    expect(check({ a: [1, 2, 3], b: [4, 5, 6], c: [[1, 2, 3], [4, 5, 6], []] })).toBeUndefined();
    expect(
      check({
        a: [
          [1, 2, 3],
          [1, 2, 3, 4],
        ],
      })?.param,
    ).toBe('a.[1]');
  });

  it('ignores brackets, braces, commas and escaped quotes inside strings', () => {
    const tricky = {
      text: '[[[[[[{{{{{{,,,,,,]]]]',
      quoted: 'a "quoted" [word], {"x":[1,2,3,4,5]}',
      backslashes: 'ends with a backslash \\',
      mixed: '\\"[[[[[[',
      'key with [[[[ and ,,,,': 'x',
    };
    const roomy = { maxDepth: 4, maxElements: 10 };
    expect(check(tricky, roomy)).toBeUndefined();
    expect(check({ ...tricky, list: [1, [[[1]]]] }, roomy)?.param).toBe('list.[1].[0].[0]');
    expect(check({ ...tricky, list: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] }, roomy)?.param).toBe('list');
  });

  it('reads escaped member names for the param, and shortens very long ones', () => {
    expect(check('{"a\\"b":{"c\\u0041":{"d":{"e":{}}}}}')?.param).toBe('a"b.cA.d.e');
    const long = 'k'.repeat(200);
    expect(check({ [long]: [1, 2, 3, 4] })?.param).toBe(`${'k'.repeat(64)}…`);
  });

  it('leaves malformed text to the parser', () => {
    expect(check('{"a":"unterminated')).toBeUndefined();
    expect(check(']]]]]]')).toBeUndefined();
    expect(check('')).toBeUndefined();
  });

  it('refuses 100,000 levels and 2 million items in bounded time, without recursion', () => {
    const started = performance.now();
    expect(check(nestedArrays(100_000), defaultJsonLimits)?.param).toBe('[0].[0].[0].[0].[0].[0].….[0].[0]');
    expect(check(`{"messages":[${'1,'.repeat(2_000_000)}1]}`, defaultJsonLimits)).toEqual({
      kind: 'elements',
      container: 'array',
      param: 'messages',
      limit: 100_000,
    });
    // Both are refused after reading a few hundred kilobytes at most; generous for a busy machine.
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('scans a valid 4 MB document in one linear pass', () => {
    const text = JSON.stringify({ rows: Array.from({ length: 50_000 }, (_, index) => ({ id: index, tags: ['a'] })) });
    expect(text.length).toBeGreaterThan(1_000_000);
    expect(check(text, defaultJsonLimits)).toBeUndefined();
  });
});

describe('jsonLimitError', () => {
  it('renders each violation as a 400 in OpenAI terms', () => {
    const depth = jsonLimitError({ kind: 'depth', container: 'array', param: 'a.[0]', limit: 64 });
    expect([depth.status, depth.type, depth.code, depth.param]).toEqual([
      400,
      'invalid_request_error',
      'json_too_deep',
      'a.[0]',
    ]);
    expect(depth.message).toBe(
      "Invalid 'a.[0]': nested too deeply. JSON objects and arrays may nest at most 64 levels deep.",
    );
    const array = jsonLimitError({ kind: 'elements', container: 'array', param: 'messages', limit: 100_000 });
    expect(array.code).toBe('array_above_max_length');
    expect(array.message).toBe("Invalid 'messages': array too long. Expected an array with maximum length 100000.");
    const object = jsonLimitError({ kind: 'elements', container: 'object', param: null, limit: 10 });
    expect([object.code, object.param]).toEqual(['object_above_max_fields', null]);
    expect(object.message).toBe('Invalid request body: too many fields. Expected an object with at most 10 fields.');
  });

  it('names another param when asked (JSON inside a string field)', () => {
    const error = jsonLimitError({ kind: 'depth', container: 'object', param: 'a', limit: 64 }, 'tools.[0].x');
    expect(error.param).toBe('tools.[0].x');
  });
});
