import { describe, expect, it } from 'vitest';
// eslint-disable-next-line no-restricted-imports -- this test resolves against the shipped registry on purpose
import { builtinProviders } from '../../providers/index.ts';
import { ConfigError } from '../config/config-error.ts';
import { parseGatewayConfig } from '../config/config-parse.ts';
import { resolveModelGroups } from './resolve-model-groups.ts';

function resolve(deployments: Record<string, unknown>[]) {
  return resolveModelGroups(parseGatewayConfig({ modelGroups: { group: { deployments } } }), builtinProviders);
}

function problems(deployments: Record<string, unknown>[]): readonly string[] {
  try {
    resolve(deployments);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

// Every preset and translator, sorted (a new preset needs no edit here).
const knownProviders = [
  ...new Set([...Object.keys(builtinProviders.presets), ...Object.keys(builtinProviders.translators)]),
]
  .sort()
  .join(', ');

describe('resolveModelGroups', () => {
  it("applies a preset's base URL and translator", () => {
    const group = resolve([{ provider: 'groq', model: 'llama-3.3-70b-versatile', apiKey: 'gsk' }]).get('group');
    expect(group?.name).toBe('group');
    expect(group?.totalWeight).toBe(1);
    const [deployment] = group?.deployments ?? [];
    expect(deployment?.id).toBe('group/0');
    expect(deployment?.weight).toBe(1);
    expect(deployment?.translator).toBe(builtinProviders.translators['openai-compatible']);
    expect(deployment?.target).toEqual({
      providerName: 'groq',
      baseURL: 'https://api.groq.com/openai/v1',
      model: 'llama-3.3-70b-versatile',
      apiKey: 'gsk',
      headers: {},
      options: {},
    });
  });

  it("resolves a translator id used directly, and the anthropic preset's base URL", () => {
    const groups = resolve([
      { provider: 'anthropic', model: 'claude-sonnet-4-5', apiKey: 'sk-ant', weight: 2 },
      { provider: 'openai-compatible', model: 'm', baseURL: 'http://10.0.0.2:8000/v1', headers: { a: 'b' } },
    ]);
    const [anthropic, compatible] = groups.get('group')?.deployments ?? [];
    expect(anthropic?.translator).toBe(builtinProviders.translators.anthropic);
    expect(anthropic?.target.baseURL).toBe('https://api.anthropic.com/v1');
    expect(compatible?.target).toMatchObject({
      baseURL: 'http://10.0.0.2:8000/v1',
      apiKey: undefined,
      headers: { a: 'b' },
    });
    expect(groups.get('group')?.totalWeight).toBe(3);
  });

  it('passes through the dialects the preset serves natively, unless the deployment says otherwise', () => {
    const [anthropic, vllm, translatedOnly] =
      resolve([
        { provider: 'anthropic', model: 'claude-sonnet-4-5', apiKey: 'sk-ant' },
        { provider: 'vllm', model: 'qwen', baseURL: 'http://10.0.0.2:8000/v1', nativeDialects: ['openai-chat'] },
        { provider: 'anthropic', model: 'claude-sonnet-4-5', apiKey: 'sk-ant', nativeDialects: [] },
      ]).get('group')?.deployments ?? [];
    expect([...(anthropic?.nativeDialects ?? [])]).toEqual(['anthropic-messages', 'anthropic-count-tokens']);
    expect([...(vllm?.nativeDialects ?? [])]).toEqual(['openai-chat']);
    expect(translatedOnly?.nativeDialects.size).toBe(0);
  });

  it("gives a deployment its preset's default options under its own", () => {
    const [openai, overridden, groq] =
      resolve([
        { provider: 'openai', model: 'gpt-5', apiKey: 'sk' },
        { provider: 'openai', model: 'gpt-4o', apiKey: 'sk', options: { maxTokensField: 'max_tokens' } },
        { provider: 'groq', model: 'llama', apiKey: 'gsk' },
      ]).get('group')?.deployments ?? [];
    expect(openai?.target.options).toEqual({ maxTokensField: 'max_completion_tokens' });
    expect(overridden?.target.options).toEqual({ maxTokensField: 'max_tokens' });
    expect(groq?.target.options).toEqual({});
  });

  it('refuses a native dialect the translator cannot pass through', () => {
    expect(
      problems([{ provider: 'groq', model: 'llama', apiKey: 'gsk', nativeDialects: ['anthropic-messages'] }]),
    ).toEqual([
      'modelGroups.group.deployments[0].nativeDialects: translator "openai-compatible" cannot pass through anthropic-messages (it can: openai-chat, openai-embeddings, openai-responses, openai-completions)',
    ]);
  });

  it('lets the config override the preset base URL, removing trailing slashes', () => {
    const [deployment] =
      resolve([{ provider: 'openai', model: 'gpt-4o', apiKey: 'sk', baseURL: 'https://proxy.example.com/v1//' }]).get(
        'group',
      )?.deployments ?? [];
    expect(deployment?.target.baseURL).toBe('https://proxy.example.com/v1');
  });

  it('names an unknown provider with the sorted list of known ones', () => {
    expect(problems([{ provider: 'openia', model: 'gpt-4o', apiKey: 'sk' }])).toEqual([
      `modelGroups.group.deployments[0].provider: unknown provider "openia"; known providers: ${knownProviders}`,
    ]);
  });

  it('requires a baseURL for vllm, which has no default', () => {
    expect(problems([{ provider: 'vllm', model: 'llama' }])).toEqual([
      'modelGroups.group.deployments[0].baseURL: required for provider "vllm" (it has no default base URL)',
    ]);
    const [deployment] =
      resolve([{ provider: 'vllm', model: 'llama', baseURL: 'http://gpu:8000/v1/' }]).get('group')?.deployments ?? [];
    expect(deployment?.target).toMatchObject({ baseURL: 'http://gpu:8000/v1', apiKey: undefined });
  });

  it('requires an apiKey for openai but not for ollama', () => {
    expect(problems([{ provider: 'openai', model: 'gpt-4o' }])).toEqual([
      'modelGroups.group.deployments[0].apiKey: required for provider "openai"',
    ]);
    const [ollama] = resolve([{ provider: 'ollama', model: 'llama3.2' }]).get('group')?.deployments ?? [];
    expect(ollama?.target.baseURL).toBe('http://localhost:11434/v1');
  });

  it('reports the problems of every deployment at once', () => {
    expect(
      problems([
        { provider: 'nope', model: 'a' },
        { provider: 'openai', model: 'b', apiKey: 'sk' },
        { provider: 'anthropic', model: 'c' },
        { provider: 'openai-compatible', model: 'd' },
      ]),
    ).toEqual([
      `modelGroups.group.deployments[0].provider: unknown provider "nope"; known providers: ${knownProviders}`,
      'modelGroups.group.deployments[2].apiKey: required for provider "anthropic"',
      'modelGroups.group.deployments[3].baseURL: required for provider "openai-compatible" (it has no default base URL)',
    ]);
  });

  it("checks each deployment's provider options at start, naming the option", () => {
    expect(
      problems([
        { provider: 'anthropic', model: 'a', apiKey: 'k', options: { defaultMaxTokens: 'lots' } },
        { provider: 'openai', model: 'b', apiKey: 'k', options: { maxTokensField: 'tokens', sendTopK: 'yes' } },
        { provider: 'groq', model: 'c', apiKey: 'k', options: { sendTopK: true } },
      ]),
    ).toEqual([
      'modelGroups.group.deployments[0].options.defaultMaxTokens: Invalid input: expected number, received string',
      'modelGroups.group.deployments[1].options.maxTokensField: must be "max_tokens" or "max_completion_tokens", got "tokens"',
      'modelGroups.group.deployments[1].options.sendTopK: must be true or false, got "yes"',
    ]);
  });
});
