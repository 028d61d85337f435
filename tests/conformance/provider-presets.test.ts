import { describe, expect, it } from 'vitest';
import { createDefaultConfig } from '../../src/config/default-config.ts';
import { parseGatewayConfig } from '../../src/config/config-parse.ts';
import { resolveModelGroups } from '../../src/routing/resolve-model-groups.ts';
import { builtinProviders } from '../../providers/index.ts';

const presets = Object.entries(builtinProviders.presets);

/** One deployment of preset `name`, with a base URL only where the preset has none. */
function deploymentOf(name: string, preset: (typeof builtinProviders.presets)[string]) {
  return {
    provider: name,
    model: 'conformance-model',
    apiKey: 'sk-conformance',
    ...(preset.baseURL === undefined ? { baseURL: 'http://127.0.0.1:9/v1' } : {}),
  };
}

// Every preset, present and future, meets these: a new OpenAI-compatible service is one preset entry and no test edit.
describe.each(presets)('preset %s', (name, preset) => {
  it('names a registered translator, and passes through only dialects that translator can', () => {
    const translator = builtinProviders.translators[preset.translator];
    expect(translator).toBeDefined();
    for (const dialect of preset.nativeDialects ?? []) expect(translator!.nativeDialects).toContain(dialect);
  });

  it('has a base URL a deployment can use (https for hosted services), and a key variable when it needs a key', () => {
    if (preset.baseURL !== undefined) {
      expect(preset.baseURL).not.toMatch(/\/$/);
      expect(() => new URL(preset.baseURL!)).not.toThrow();
      if (preset.keyOptional !== true) expect(preset.baseURL).toMatch(/^https:\/\//);
    }
    if (preset.keyOptional !== true) expect(preset.apiKeyEnvironmentVariable).toMatch(/^[A-Z][A-Z0-9_]*$/);
  });

  it("resolves as a deployment with its options valid, its headers under the config's, its key as the credential", async () => {
    const groups = resolveModelGroups(
      parseGatewayConfig({
        modelGroups: {
          plain: { deployments: [deploymentOf(name, preset)] },
          overridden: { deployments: [{ ...deploymentOf(name, preset), headers: { 'X-Conformance': 'config' } }] },
        },
      }),
      builtinProviders,
    );
    const [deployment] = groups.get('plain')!.deployments;
    expect(deployment!.target.options).toMatchObject(preset.options ?? {});
    expect(deployment!.target.headers).toEqual(preset.headers ?? {});
    const request = await deployment!.translator.buildChatRequest(
      {
        model: 'conformance-model',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
        stream: false,
        streamIncludeUsage: false,
      },
      deployment!.target,
    );
    expect(request.url.startsWith(deployment!.target.baseURL)).toBe(true);
    expect(JSON.stringify(request.headers)).toContain('sk-conformance');
    for (const [header, value] of Object.entries(preset.headers ?? {})) {
      expect(Object.entries(request.headers).find(([key]) => key.toLowerCase() === header.toLowerCase())?.[1]).toBe(
        value,
      );
    }
    const overridden = groups.get('overridden')!.deployments[0]!;
    expect(overridden.target.headers['X-Conformance']).toBe('config');
  });

  it('offers its models in the embedded default config when its key variable is set', () => {
    const variable = preset.apiKeyEnvironmentVariable;
    if (variable === undefined || preset.models === undefined) return;
    const config = createDefaultConfig({ [name]: preset }, { [variable]: 'sk-set' });
    expect(Object.keys(config.modelGroups)).toEqual([...preset.models]);
    expect(createDefaultConfig({ [name]: preset }, {}).modelGroups).toEqual({});
  });
});

describe('the embedded default config', () => {
  it('keeps the groups it always offered, OpenAI first', () => {
    const environment = { OPENAI_API_KEY: 'a', ANTHROPIC_API_KEY: 'b', GROQ_API_KEY: 'c' };
    expect(Object.keys(createDefaultConfig(builtinProviders.presets, environment).modelGroups)).toEqual([
      'gpt-4o-mini',
      'gpt-4o',
      'text-embedding-3-small',
      'claude-sonnet-4-5',
      'claude-haiku-4-5',
      'llama-3.3-70b-versatile',
    ]);
  });
});
