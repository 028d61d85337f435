import { describe, expect, it } from 'vitest';
import { isGatewayError, openAIErrorBody, renderError } from '../errors.ts';
import { rateLimitError } from './rate-limit-error.ts';
import type { RateLimitRefusal } from './rate-limit-outcome.ts';

const refusal: RateLimitRefusal = {
  allowed: false,
  keyId: 'key_1',
  limited: 'rpm',
  retryAfterSeconds: 20,
  limit: 3,
  remaining: 0,
  resetAt: 60_000,
  requested: 1,
  requestTooLarge: false,
  requests: { limit: 3, remaining: 0, resetAt: 60_000 },
  tokens: { limit: 1_000, remaining: 400, resetAt: 60_000 },
};

describe('rateLimitError', () => {
  it("answers a 429 in OpenAI's own rate-limit shape for RPM", async () => {
    const error = rateLimitError(refusal, 40_000);
    expect(isGatewayError(error)).toBe(true);
    expect(error.status).toBe(429);
    expect(error.retryable).toBe(false);
    expect(openAIErrorBody(error)).toEqual({
      error: {
        message:
          'Rate limit reached for key key_1 on requests per min (RPM): Limit 3, Used 3, Requested 1. ' +
          'Please try again in 20s.',
        type: 'requests',
        param: null,
        code: 'rate_limit_exceeded',
      },
    });
    const response = renderError(error, 'openai');
    expect(response.status).toBe(429);
    expect(Object.fromEntries(response.headers)).toEqual({
      'content-type': 'application/json',
      'retry-after': '20',
      'x-ratelimit-limit-requests': '3',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '20s',
      'x-ratelimit-limit-tokens': '1000',
      'x-ratelimit-remaining-tokens': '400',
      'x-ratelimit-reset-tokens': '20s',
    });
    const anthropic = await renderError(error, 'anthropic').json();
    expect(anthropic).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: error.message } });
  });

  it('names tokens per minute, with type tokens, for TPM', () => {
    const error = rateLimitError(
      { ...refusal, limited: 'tpm', limit: 1_000, remaining: 120, requested: 208, retryAfterSeconds: 1 },
      59_472,
    );
    expect(openAIErrorBody(error).error).toMatchObject({
      type: 'tokens',
      code: 'rate_limit_exceeded',
      message:
        'Rate limit reached for key key_1 on tokens per min (TPM): Limit 1000, Used 880, Requested 208. ' +
        'Please try again in 528ms.',
    });
    expect(error.headers?.['retry-after']).toBe('1');
  });

  it('says to make the request smaller when it can never fit', () => {
    const error = rateLimitError(
      { ...refusal, limited: 'tpm', limit: 1_000, remaining: 1_000, requested: 5_000, requestTooLarge: true },
      40_000,
    );
    expect(error.message).toBe(
      'Request too large for key key_1 on tokens per min (TPM): Limit 1000, Requested 5000. ' +
        'The input or output tokens must be reduced in order to run successfully.',
    );
  });
});
