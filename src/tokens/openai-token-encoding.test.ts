import { describe, expect, it } from 'vitest';
import { openAiEncodingForModel } from './openai-token-encoding.ts';

describe('openAiEncodingForModel', () => {
  it.each([
    'gpt-4o',
    'gpt-4o-mini',
    'gpt-4o-2024-08-06',
    'gpt-4.1',
    'gpt-4.1-nano-2025-04-14',
    'gpt-4.5-preview',
    'gpt-5',
    'gpt-5-mini',
    'gpt-5.1-codex',
    'gpt-5-2025-08-07',
    'o1',
    'o1-mini',
    'o3-pro',
    'o4-mini-2025-04-16',
    'chatgpt-4o-latest',
    'gpt-oss-120b',
    'gpt-oss:20b',
    'GPT-4o',
    'openai/gpt-oss-120b',
    'accounts/fireworks/models/gpt-oss-20b',
    'openai.gpt-oss-120b-1:0',
    'ft:gpt-4o-mini-2024-07-18:acme::abc123',
  ])('%s: o200k_base', (model) => {
    expect(openAiEncodingForModel(model)).toBe('o200k_base');
  });

  it.each([
    'gpt-4',
    'gpt-4-0613',
    'gpt-4-turbo',
    'gpt-4-turbo-2024-04-09',
    'gpt-4-32k',
    'gpt-3.5-turbo',
    'gpt-3.5-turbo-0125',
    'gpt-35-turbo',
    'text-embedding-3-small',
    'text-embedding-3-large',
    'openai/gpt-4-turbo',
  ])('%s: cl100k_base', (model) => {
    expect(openAiEncodingForModel(model)).toBe('cl100k_base');
  });

  it.each([
    'llama-3.3-70b-versatile',
    'meta-llama/Llama-3.1-8B-Instruct',
    'mistral-large-latest',
    'qwen2.5-coder:32b',
    'gemini-2.5-pro',
    'deepseek-chat',
    'claude-sonnet-4-5',
    'text',
    'gpt-40',
    'o10-preview',
    'gpt-4omni',
    'text-embedding-ada-002',
    '',
  ])('%s: none (the estimate)', (model) => {
    expect(openAiEncodingForModel(model)).toBeUndefined();
  });
});
