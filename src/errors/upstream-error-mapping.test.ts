import { describe, expect, it } from 'vitest';
import { createUpstreamErrorMapper } from './upstream-error-mapping.ts';

const mapper = createUpstreamErrorMapper({
  provider: 'example',
  label: 'Example',
  fields: { message: ['error.message', 'message'], type: ['error.status'], code: ['error.code'] },
  statusByType: { RESOURCE_EXHAUSTED: 429 },
  rulesByType: {
    content_filter: { status: 400, type: 'invalid_request_error', code: 'content_filter', retryable: false },
  },
});
const noHeaders = new Headers();

describe('createUpstreamErrorMapper', () => {
  it('reads the message from the first path that holds one, and keeps the upstream code', () => {
    expect(mapper.map(400, { error: { message: 'bad field', code: 'invalid_field' } }, noHeaders)).toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_field',
      message: 'bad field',
      provider: 'example',
      upstreamStatus: 400,
      retryable: false,
    });
    expect(mapper.map(400, { message: 'top level' }, noHeaders).message).toBe('top level');
  });

  it('falls back to a message of its own for bodies without one, and cuts text bodies', () => {
    expect(mapper.map(500, { error: { message: 42 } }, noHeaders).message).toBe('Example returned HTTP 500.');
    expect(mapper.map(502, `  ${'x'.repeat(5000)}  `, noHeaders).message).toHaveLength(2000);
  });

  it('lets a body type say more than its status: a 4xx carrying a quota status is a 429', () => {
    expect(mapper.map(400, { error: { message: 'quota', status: 'RESOURCE_EXHAUSTED' } }, noHeaders)).toMatchObject({
      status: 429,
      type: 'rate_limit_error',
      retryable: true,
    });
  });

  it('answers by rule for a typed body before the status table', () => {
    expect(mapper.map(400, { error: { message: 'filtered', code: 'content_filter' } }, noHeaders)).toMatchObject({
      status: 400,
      code: 'content_filter',
    });
  });

  it("blames the gateway's credentials on 401 and 403, hiding echoed keys", () => {
    const error = mapper.map(401, { error: { message: 'Incorrect API key provided: sk-proj-****abcd' } }, noHeaders);
    expect(error).toMatchObject({ status: 502, code: 'upstream_authentication_failed', retryable: true });
    expect(error.message).toContain('gateway configuration problem');
    expect(error.message).not.toContain('abcd');
  });

  it('passes retry-after on only when retrying can help', () => {
    const headers = new Headers({ 'retry-after': '7', 'x-other': '1' });
    expect(mapper.map(429, { message: 'slow' }, headers).headers).toEqual({ 'retry-after': '7' });
    expect(mapper.map(400, { message: 'bad' }, headers).headers).toBeUndefined();
  });

  it('answers unlisted statuses with a 502, retryable only for 5xx', () => {
    expect(mapper.map(418, 'teapot', noHeaders)).toMatchObject({ status: 502, retryable: false });
    expect(mapper.map(599, 'odd', noHeaders)).toMatchObject({ status: 502, retryable: true });
  });

  it('gives in-band errors the status their type or numeric code stands for, else 500', () => {
    expect(mapper.mapInBand({ error: { message: 'q', status: 'RESOURCE_EXHAUSTED' } })).toMatchObject({ status: 429 });
    expect(mapper.mapInBand({ error: { message: 'gone', code: 503 } })).toMatchObject({ status: 503 });
    expect(mapper.mapInBand({ error: { message: 'odd', code: 'weird' } })).toMatchObject({
      status: 502,
      upstreamStatus: 500,
      retryable: true,
    });
  });
});
