import { describe, expect, it } from 'vitest';
import { awsFrame } from '../../src/framing/aws-event-stream.test-helper.ts';
import { reduceProviderStream } from '../../tests/conformance/provider-suite.ts';
import { bedrockChatStream } from './bedrock-stream.ts';
import { bedrockTranslator } from './bedrock-translator.ts';

const event = (type: string, data: unknown) => ({ type, data });
const frames = (...messages: Uint8Array[]) => {
  const bytes = new Uint8Array(messages.reduce((total, message) => total + message.length, 0));
  let offset = 0;
  for (const message of messages) {
    bytes.set(message, offset);
    offset += message.length;
  }
  return bytes;
};

describe('bedrockChatStream', () => {
  it('starts once with a made id and no model, whatever event comes first', () => {
    const state = bedrockChatStream.init();
    const parts = bedrockChatStream.onEvent(
      state,
      event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } }),
    );
    expect(parts[0]).toMatchObject({
      type: 'response-start',
      model: '',
      id: expect.stringMatching(/^bedrock-[0-9a-f-]{36}$/) as string,
    });
    expect(parts.slice(1)).toEqual([
      { type: 'text-start', choiceIndex: 0 },
      { type: 'text-delta', choiceIndex: 0, delta: 'Hi' },
    ]);
    expect(bedrockChatStream.onEvent(state, event('messageStart', { role: 'assistant' }))).toEqual([]);
  });

  it('is complete only after metadata, so the usage after messageStop is kept', () => {
    const state = bedrockChatStream.init();
    bedrockChatStream.onEvent(state, event('messageStart', { role: 'assistant' }));
    bedrockChatStream.onEvent(state, event('messageStop', { stopReason: 'max_tokens' }));
    expect(bedrockChatStream.isComplete?.(state)).toBe(false);
    const parts = bedrockChatStream.onEvent(
      state,
      event('metadata', {
        usage: { inputTokens: 3, outputTokens: 5, totalTokens: 8, cacheWriteInputTokens: 2 },
        metrics: { latencyMs: 9 },
      }),
    );
    expect(parts).toEqual([
      {
        type: 'usage',
        usage: {
          inputTokens: 5,
          outputTokens: 5,
          totalTokens: 10,
          cacheWriteInputTokens: 2,
          raw: { inputTokens: 3, outputTokens: 5, totalTokens: 8, cacheWriteInputTokens: 2 },
        },
      },
    ]);
    expect(bedrockChatStream.isComplete?.(state)).toBe(true);
    expect(bedrockChatStream.onEnd(state)).toEqual([]);
  });

  it('gives a tool call that streamed no input the arguments {}', () => {
    const state = bedrockChatStream.init();
    bedrockChatStream.onEvent(state, event('messageStart', { role: 'assistant' }));
    bedrockChatStream.onEvent(
      state,
      event('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 't', name: 'now' } } }),
    );
    expect(bedrockChatStream.onEvent(state, event('contentBlockStop', { contentBlockIndex: 0 }))).toEqual([
      { type: 'tool-input-delta', choiceIndex: 0, toolIndex: 0, delta: '{}' },
      { type: 'tool-input-end', choiceIndex: 0, toolIndex: 0 },
    ]);
  });

  it('reports a stream cut before messageStop as an error part', () => {
    const state = bedrockChatStream.init();
    bedrockChatStream.onEvent(state, event('messageStart', { role: 'assistant' }));
    const [part] = bedrockChatStream.onEnd(state);
    expect(part).toMatchObject({ type: 'error', error: { status: 502, code: 'upstream_stream_incomplete' } });
  });

  it('refuses an event whose fields have the wrong types', () => {
    const state = bedrockChatStream.init();
    expect(() => bedrockChatStream.onEvent(state, event('contentBlockDelta', { contentBlockIndex: 'zero' }))).toThrow(
      expect.objectContaining({ code: 'upstream_invalid_stream' }) as Error,
    );
  });

  it('through the real framing: an exception message mid-stream ends the stream as the upstream error', () => {
    const bytes = frames(
      awsFrame('event', 'messageStart', '{"role":"assistant"}'),
      awsFrame('event', 'contentBlockDelta', '{"contentBlockIndex":0,"delta":{"text":"Hel"},"p":"abc"}'),
      awsFrame('exception', 'throttlingException', '{"message":"Too many tokens, please wait before trying again."}'),
    );
    expect(() => reduceProviderStream(bedrockTranslator, bytes)).toThrow(
      expect.objectContaining({
        status: 429,
        upstreamStatus: 429,
        message: expect.stringContaining('Too many tokens') as string,
      }) as Error,
    );
  });
});
