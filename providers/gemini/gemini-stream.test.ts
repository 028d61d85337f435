import { describe, expect, it } from 'vitest';
import type { CanonicalStreamPart } from '../../src/canonical/index.ts';
import { isGatewayError } from '../../src/errors.ts';
import { geminiErrorMapper } from './gemini-error.ts';
import { geminiChatStream } from './gemini-stream.ts';

const run = (chunks: unknown[]): CanonicalStreamPart[] => {
  const state = geminiChatStream.init();
  const parts = chunks.flatMap((data) => geminiChatStream.onEvent(state, { type: undefined, data }));
  return [...parts, ...geminiChatStream.onEnd(state)];
};

const chunk = (candidates: unknown[], extra: Record<string, unknown> = {}) => ({
  candidates,
  modelVersion: 'gemini-2.5-flash',
  responseId: 'r1',
  ...extra,
});

describe('geminiChatStream', () => {
  it('reads several candidates as choices by their index', () => {
    const parts = run([
      chunk([
        { content: { parts: [{ text: 'A' }], role: 'model' }, index: 0 },
        { content: { parts: [{ text: 'B' }], role: 'model' }, index: 1 },
      ]),
      chunk([
        { content: { parts: [{ text: '!' }], role: 'model' }, finishReason: 'STOP', index: 1 },
        { content: { parts: [{ text: '?' }], role: 'model' }, finishReason: 'MAX_TOKENS', index: 0 },
      ]),
    ]);
    expect(parts.filter((part) => part.type !== 'response-start')).toEqual([
      { type: 'text-delta', choiceIndex: 0, delta: 'A' },
      { type: 'text-delta', choiceIndex: 1, delta: 'B' },
      { type: 'text-delta', choiceIndex: 1, delta: '!' },
      { type: 'finish', choiceIndex: 1, finishReason: { unified: 'stop', raw: 'STOP' } },
      { type: 'text-delta', choiceIndex: 0, delta: '?' },
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'length', raw: 'MAX_TOKENS' } },
    ]);
  });

  it('ends reasoning with its signature when the answer text begins', () => {
    const parts = run([
      chunk([{ content: { parts: [{ text: 'Hmm.', thought: true, thoughtSignature: 'c2ln' }] }, index: 0 }]),
      chunk([{ content: { parts: [{ text: 'Yes.' }] }, finishReason: 'STOP', index: 0 }]),
    ]);
    expect(parts.slice(1)).toEqual([
      { type: 'reasoning-delta', choiceIndex: 0, delta: 'Hmm.' },
      { type: 'reasoning-end', choiceIndex: 0, signature: 'c2ln' },
      { type: 'text-delta', choiceIndex: 0, delta: 'Yes.' },
      { type: 'finish', choiceIndex: 0, finishReason: { unified: 'stop', raw: 'STOP' } },
    ]);
  });

  it('reports a stream cut before the finish, and one with no answer at all, as incomplete', () => {
    const cut = run([chunk([{ content: { parts: [{ text: 'Par' }] }, index: 0 }])]);
    expect(cut.at(-1)).toMatchObject({ type: 'error', error: { status: 502, code: 'upstream_stream_incomplete' } });
    const empty = run([]);
    expect(empty).toEqual([
      expect.objectContaining({ type: 'error', error: expect.objectContaining({ retryable: true }) }),
    ]);
  });

  it("throws Google's error envelope sent inside the stream as the error it stands for", () => {
    const state = geminiChatStream.init();
    let caught: unknown;
    try {
      geminiChatStream.onEvent(state, {
        type: undefined,
        data: { error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } },
      });
    } catch (error) {
      caught = error;
    }
    expect(isGatewayError(caught)).toBe(true);
    expect(caught).toMatchObject({ status: 503, retryable: true, message: 'The model is overloaded.' });
  });

  it('answers a stream chunk that is not a response as an invalid stream', () => {
    const state = geminiChatStream.init();
    expect(() => geminiChatStream.onEvent(state, { type: undefined, data: { candidates: 'x' } })).toThrow(
      /cannot read/,
    );
  });
});

describe('geminiErrorMapper', () => {
  it('maps a quota error sent in band as a 429', () => {
    expect(
      geminiErrorMapper.mapInBand({ error: { code: 429, message: 'Quota', status: 'RESOURCE_EXHAUSTED' } }),
    ).toMatchObject({ status: 429, type: 'rate_limit_error' });
  });

  it('maps FAILED_PRECONDITION (the deployment cannot be served from here) as a retryable 502', () => {
    expect(
      geminiErrorMapper.map(
        400,
        {
          error: {
            code: 400,
            message: 'User location is not supported for the API use.',
            status: 'FAILED_PRECONDITION',
          },
        },
        new Headers(),
      ),
    ).toMatchObject({ status: 502, type: 'upstream_error', retryable: true });
  });
});
