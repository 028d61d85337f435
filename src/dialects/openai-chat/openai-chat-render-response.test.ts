import { describe, expect, it } from 'vitest';
import type { CanonicalChatResponse, CanonicalFinishReason } from '../../canonical/canonical-chat-response.ts';
import { openAIFinishReason, openAIUsage, renderOpenAIChatResponse } from './openai-chat-render-response.ts';

const response = (overrides: Partial<CanonicalChatResponse> = {}): CanonicalChatResponse => ({
  id: 'chatcmpl-1',
  model: 'claude-sonnet-4-5-20250929',
  created: 1_750_000_000,
  choices: [{ index: 0, text: 'Hello!', toolCalls: [], finishReason: { unified: 'stop', raw: 'end_turn' } }],
  usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
  ...overrides,
});

describe('openAIFinishReason', () => {
  it.each<[CanonicalFinishReason['unified'], string]>([
    ['stop', 'stop'],
    ['length', 'length'],
    ['tool-calls', 'tool_calls'],
    ['content-filter', 'content_filter'],
    ['error', 'stop'],
    ['other', 'stop'],
  ])('renders %s as %s', (unified, expected) => {
    expect(openAIFinishReason({ unified, raw: 'whatever' })).toBe(expected);
  });
});

describe('openAIUsage', () => {
  it('renders cached and reasoning token details, defaulting them to 0', () => {
    expect(
      openAIUsage({ inputTokens: 100, outputTokens: 50, totalTokens: 150, cachedInputTokens: 80, reasoningTokens: 20 }),
    ).toEqual({
      prompt_tokens: 100,
      completion_tokens: 50,
      total_tokens: 150,
      prompt_tokens_details: { cached_tokens: 80 },
      completion_tokens_details: { reasoning_tokens: 20 },
    });
    expect(openAIUsage({ inputTokens: 1, outputTokens: 2, totalTokens: 3, cacheWriteInputTokens: 9 })).toEqual({
      prompt_tokens: 1,
      completion_tokens: 2,
      total_tokens: 3,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });
});

describe('renderOpenAIChatResponse', () => {
  it('renders a text answer as a chat.completion', () => {
    expect(renderOpenAIChatResponse(response())).toEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1_750_000_000,
      model: 'claude-sonnet-4-5-20250929',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello!', refusal: null },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
      system_fingerprint: null,
    });
  });

  it('renders tool calls, reasoning and the tool_calls finish reason', () => {
    const rendered = renderOpenAIChatResponse(
      response({
        choices: [
          {
            index: 0,
            text: null,
            reasoning: 'The user wants the weather.',
            toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
            finishReason: { unified: 'tool-calls', raw: 'tool_use' },
          },
        ],
        systemFingerprint: 'fp_1',
      }),
    );
    expect(rendered.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          refusal: null,
          reasoning_content: 'The user wants the weather.',
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ]);
    expect(rendered.system_fingerprint).toBe('fp_1');
  });

  it('renders several choices, a refusal, logprobs and the length finish reason', () => {
    const logprobs = { content: [{ token: 'Hi', logprob: -0.1 }] };
    const rendered = renderOpenAIChatResponse(
      response({
        choices: [
          { index: 0, text: 'Hi', toolCalls: [], logprobs, finishReason: { unified: 'length', raw: 'max_tokens' } },
          {
            index: 1,
            text: null,
            refusal: 'I cannot.',
            toolCalls: [],
            finishReason: { unified: 'content-filter', raw: 'refusal' },
          },
        ],
      }),
    );
    expect(rendered.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: 'Hi', refusal: null }, logprobs, finish_reason: 'length' },
      {
        index: 1,
        message: { role: 'assistant', content: null, refusal: 'I cannot.' },
        logprobs: null,
        finish_reason: 'content_filter',
      },
    ]);
  });

  it('leaves usage out when the provider reported none', () => {
    expect('usage' in renderOpenAIChatResponse(response({ usage: undefined }))).toBe(false);
  });
});
