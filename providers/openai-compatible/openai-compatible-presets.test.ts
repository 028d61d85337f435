import { describe, expect, it } from 'vitest';
import { builtinProviders } from '../index.ts';
import { openAICompatiblePresets } from './openai-compatible-presets.ts';

describe('openAICompatiblePresets', () => {
  it('puts every OpenAI-shaped preset on the openai-compatible translator', () => {
    for (const preset of Object.values(openAICompatiblePresets)) expect(preset.translator).toBe('openai-compatible');
    expect(openAICompatiblePresets.openai?.baseURL).toBe('https://api.openai.com/v1');
    expect(openAICompatiblePresets.groq?.baseURL).toBe('https://api.groq.com/openai/v1');
    expect(openAICompatiblePresets.fireworks?.baseURL).toBe('https://api.fireworks.ai/inference/v1');
    expect(openAICompatiblePresets.openrouter?.baseURL).toBe('https://openrouter.ai/api/v1');
  });

  it('needs no key for local servers, and a base URL from the config for vllm and generic servers', () => {
    expect(openAICompatiblePresets.ollama).toMatchObject({
      translator: 'openai-compatible',
      baseURL: 'http://localhost:11434/v1',
      keyOptional: true,
    });
    expect(openAICompatiblePresets.vllm).toMatchObject({
      translator: 'openai-compatible',
      baseURL: undefined,
      keyOptional: true,
    });
    expect(openAICompatiblePresets['openai-compatible']).toMatchObject({
      translator: 'openai-compatible',
      baseURL: undefined,
      keyOptional: true,
    });
  });
});

describe('builtinProviders', () => {
  it('registers each translator under its own id', () => {
    expect(Object.keys(builtinProviders.translators).sort()).toEqual([
      'anthropic',
      'azure-openai',
      'bedrock',
      'bedrock-anthropic',
      'cohere',
      'gemini',
      'openai-compatible',
      'vertex',
      'vertex-anthropic',
    ]);
    for (const [id, translator] of Object.entries(builtinProviders.translators)) expect(translator.id).toBe(id);
  });

  it('points every preset at a registered translator', () => {
    for (const [name, preset] of Object.entries(builtinProviders.presets))
      expect(builtinProviders.translators[preset.translator], name).toBeDefined();
    expect(builtinProviders.presets.anthropic).toMatchObject({
      translator: 'anthropic',
      baseURL: 'https://api.anthropic.com/v1',
      apiKeyEnvironmentVariable: 'ANTHROPIC_API_KEY',
    });
  });

  it('passes through the Responses API only to OpenAI itself, legacy completions to the servers that keep it, and chat to every one', () => {
    const serving = (dialect: string) =>
      Object.entries(openAICompatiblePresets)
        .filter(([, preset]) => (preset.nativeDialects as readonly string[] | undefined)?.includes(dialect))
        .map(([name]) => name);
    expect(serving('openai-responses')).toEqual(['openai']);
    expect(serving('openai-completions')).toContain('openai');
    expect(serving('openai-completions')).not.toContain('groq');
    expect(serving('openai-chat')).toEqual(Object.keys(openAICompatiblePresets));
  });
});
