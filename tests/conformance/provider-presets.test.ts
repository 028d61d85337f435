import { describe, expect, it } from 'vitest';
import { createDefaultConfig } from '../../src/config/default-config.ts';
import { parseGatewayConfig } from '../../src/config/config-parse.ts';
import { resolveModelGroups } from '../../src/routing/resolve-model-groups.ts';
import { builtinProviders } from '../../providers/index.ts';

const presets = Object.entries(builtinProviders.presets);

/**
 * The options a deployment of a cloud translator cannot do without (where the service lives), by translator id:
 * Vertex AI's project and location, Bedrock's region. Every other translator needs none.
 */
const requiredOptions: Record<string, Record<string, unknown>> = {
  vertex: { project: 'conformance-project', location: 'us-central1' },
  'vertex-anthropic': { project: 'conformance-project', location: 'us-central1' },
  bedrock: { region: 'us-east-1' },
  'bedrock-anthropic': { region: 'us-east-1' },
};

/** One deployment of preset `name`, with a base URL only where the preset has none. */
function deploymentOf(name: string, preset: (typeof builtinProviders.presets)[string]) {
  const options = requiredOptions[preset.translator];
  return {
    provider: name,
    model: 'conformance-model',
    apiKey: 'sk-conformance',
    ...(preset.baseURL === undefined ? { baseURL: 'http://127.0.0.1:9/v1' } : {}),
    ...(options === undefined ? {} : { options }),
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
    // An empty base URL is derived by the translator from the options (Bedrock's regional endpoint).
    if (preset.baseURL !== undefined && preset.baseURL !== '') {
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
    expect(deployment!.target.options).toMatchObject({ ...preset.options, ...requiredOptions[preset.translator] });
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
    // The request goes to the base URL, or (Vertex AI) to the regional host under the base URL's host.
    const baseURL = deployment!.target.baseURL;
    if (baseURL !== '') {
      const sent = new URL(request.url);
      expect(request.url.startsWith(baseURL) || sent.hostname.endsWith(`-${new URL(baseURL).hostname}`)).toBe(true);
    }
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
