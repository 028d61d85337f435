import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors.ts';
import { classifyAttemptFailure, retryAfterMs } from './attempt-failure.ts';

function upstream(upstreamStatus: number, extra: Partial<ConstructorParameters<typeof GatewayError>[0]> = {}) {
  return new GatewayError({
    status: upstreamStatus >= 500 ? 502 : upstreamStatus,
    type: 'upstream_error',
    message: 'upstream said no',
    provider: 'openai',
    upstreamStatus,
    ...extra,
  });
}

describe('classifyAttemptFailure', () => {
  it.each([408, 429, 500, 502, 503, 504, 529])('retries and counts an upstream %i', (status) => {
    expect(classifyAttemptFailure(upstream(status), false, 0)).toEqual({ retry: true, verdict: { kind: 'failure' } });
  });

  it.each([400, 404, 409, 413, 422, 501])(
    'never retries an upstream %i, nor holds it against the deployment',
    (status) => {
      expect(classifyAttemptFailure(upstream(status), false, 0)).toEqual({
        retry: false,
        verdict: { kind: 'neutral' },
      });
    },
  );

  it.each([401, 403])('opens the circuit at once on %i and moves on', (status) => {
    expect(classifyAttemptFailure(upstream(status), false, 0)).toEqual({ retry: true, verdict: { kind: 'open' } });
  });

  it('opens the circuit on a 429 for its retry-after', () => {
    const failure = classifyAttemptFailure(upstream(429, { headers: { 'retry-after': '7' } }), false, 0);
    expect(failure).toEqual({ retry: true, verdict: { kind: 'open', forMs: 7000 }, retryAfterMs: 7000 });
  });

  it('calls for the typed fallbacks on context-window and content-policy refusals', () => {
    const tooLong = upstream(400, { code: 'context_length_exceeded' });
    expect(classifyAttemptFailure(tooLong, false, 0).fallback).toBe('context-window');
    const anthropicTooLong = upstream(400, { message: 'prompt is too long: 210000 tokens > 200000 maximum' });
    expect(classifyAttemptFailure(anthropicTooLong, false, 0).fallback).toBe('context-window');
    const refused = upstream(400, { code: 'content_policy_violation' });
    expect(classifyAttemptFailure(refused, false, 0)).toMatchObject({ retry: false, fallback: 'content-policy' });
  });

  it('retries what the gateway saw itself (unreachable, timeout, broken answer), and nothing once the client left', () => {
    const unreachable = new GatewayError({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_unreachable',
      provider: 'openai',
      retryable: true,
      message: 'x',
    });
    expect(classifyAttemptFailure(unreachable, false, 0)).toEqual({ retry: true, verdict: { kind: 'failure' } });
    expect(classifyAttemptFailure(unreachable, true, 0)).toEqual({ retry: false, verdict: { kind: 'neutral' } });
    expect(classifyAttemptFailure(new Error('a bug'), false, 0)).toEqual({
      retry: false,
      verdict: { kind: 'neutral' },
    });
  });
});

describe('retryAfterMs', () => {
  it('reads seconds, milliseconds and HTTP dates', () => {
    expect(retryAfterMs({ 'retry-after': '2' }, 0)).toBe(2000);
    expect(retryAfterMs({ 'retry-after-ms': '250', 'retry-after': '2' }, 0)).toBe(250);
    expect(retryAfterMs({ 'retry-after': new Date(10_000).toUTCString() }, 4000)).toBe(6000);
    expect(retryAfterMs({ 'retry-after': 'soon' }, 0)).toBeUndefined();
    expect(retryAfterMs(undefined, 0)).toBeUndefined();
  });
});
