import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseGatewayConfig } from './config-parse.ts';
import { prepareConfigInput } from './config-input.ts';
import { ConfigError } from './config-error.ts';
import { convertLiteLLMConfig, isLiteLLMConfig } from './litellm-config.ts';

const fixture = (name: string): unknown =>
  parseYaml(readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8'));

describe('isLiteLLMConfig', () => {
  it('recognises a top-level model_list, and nothing else', () => {
    expect(isLiteLLMConfig(fixture('litellm-proxy-config.yaml'))).toBe(true);
    expect(isLiteLLMConfig({ modelGroups: {} })).toBe(false);
    expect(isLiteLLMConfig({ model_list: 'x' })).toBe(false);
    expect(isLiteLLMConfig([{ model_list: [] }])).toBe(false);
    expect(isLiteLLMConfig(null)).toBe(false);
  });
});

describe('convertLiteLLMConfig on a config as LiteLLM documents it', () => {
  const conversion = convertLiteLLMConfig(fixture('litellm-proxy-config.yaml'));
  const groups = conversion.config.modelGroups;

  it('has no problems and makes one group per model_name, deployments in file order', () => {
    expect(conversion.problems).toEqual([]);
    expect(Object.keys(groups)).toEqual([
      'gpt-4o',
      'gpt-4o-mini',
      'claude-sonnet',
      'vllm-models',
      'bedrock-claude',
      'gemini-pro',
      'groq-llama',
      'local-llama',
    ]);
    expect(conversion.origins['modelGroups.gpt-4o.deployments[1]']).toBe('model_list[1]');
    expect(conversion.origins['modelGroups.bedrock-claude.deployments[1]']).toBe('model_list[6]');
  });

  it('turns os.environ/NAME into ${NAME} and maps Azure, OpenAI, Anthropic, vLLM and Ollama entries', () => {
    expect(groups['gpt-4o']?.deployments).toEqual([
      {
        provider: 'azure',
        model: 'gpt-4o-eu',
        baseURL: 'https://my-endpoint-europe-berri-992.openai.azure.com/',
        apiKey: '${AZURE_API_KEY_EU}',
        rpm: 6,
        options: { apiVersion: '2024-10-21' },
        timeouts: { totalMs: 30_000 },
      },
      {
        provider: 'azure',
        model: 'gpt-4o-ca',
        baseURL: 'https://my-endpoint-canada-berri992.openai.azure.com/',
        apiKey: '${AZURE_API_KEY_CA}',
        rpm: 6,
        tpm: 100000,
        options: { apiVersion: '${AZURE_API_VERSION:-v1}' },
        timeouts: { totalMs: 30_000 },
      },
    ]);
    expect(groups['gpt-4o-mini']?.deployments[0]).toMatchObject({
      provider: 'openai',
      model: 'gpt-4o-mini',
      apiKey: '${OPENAI_API_KEY}',
      headers: { 'OpenAI-Organization': '${OPENAI_ORG_ID}' },
      pricing: { input: 0.15, output: 0.6 },
    });
    // Its own timeout wins over router_settings.timeout.
    expect(groups['claude-sonnet']?.deployments[0]).toMatchObject({
      provider: 'anthropic',
      apiKey: '${ANTHROPIC_API_KEY}',
      timeouts: { totalMs: 120_000 },
    });
    expect(groups['vllm-models']?.deployments[0]).toMatchObject({
      provider: 'openai-compatible',
      model: 'facebook/opt-125m',
      baseURL: 'http://0.0.0.0:4000/v1',
      apiKey: 'none',
    });
    expect(groups['local-llama']?.deployments[0]).toMatchObject({
      provider: 'ollama',
      baseURL: 'http://localhost:11434/v1',
    });
    expect(groups['groq-llama']?.deployments[0]).toMatchObject({ apiKey: '${GROQ_API_KEY}', tpm: 6000 });
  });

  it('maps Bedrock and Vertex options, and routes a group with `order` by priority', () => {
    expect(groups['bedrock-claude']).toMatchObject({
      strategy: 'priority',
      deployments: [
        {
          provider: 'bedrock',
          model: 'anthropic.claude-3-5-sonnet-20240620-v1:0',
          priority: 1,
          options: {
            region: 'us-east-1',
            accessKeyId: '${AWS_ACCESS_KEY_ID}',
            secretAccessKey: '${AWS_SECRET_ACCESS_KEY}',
          },
        },
        { provider: 'bedrock', model: 'us.anthropic.claude-3-5-sonnet-20240620-v1:0', priority: 2 },
      ],
    });
    expect(groups['gemini-pro']?.deployments[0]).toMatchObject({
      provider: 'vertex',
      options: { project: 'my-project', location: 'us-central1', serviceAccount: '${VERTEX_SERVICE_ACCOUNT_JSON}' },
    });
  });

  it('takes router settings, fallbacks and default fallbacks', () => {
    expect(conversion.config.routing).toEqual({
      strategy: 'least-busy',
      retry: { retries: 3 },
      cooldown: { failures: 4, windowMs: 60_000, cooldownMs: 30_000 },
      defaultFallbacks: ['gpt-4o-mini'],
    });
    expect(groups['gpt-4o']?.fallbacks).toEqual(['claude-sonnet']);
    expect(groups['claude-sonnet']?.fallbacks).toEqual(['gpt-4o-mini']);
    expect(groups['gpt-4o-mini']?.contextWindowFallbacks).toEqual(['gemini-pro']);
  });

  it('reports every part not taken by its path, once, and never a value', () => {
    expect(conversion.warnings).toEqual(
      expect.arrayContaining([
        'model_list[2].litellm_params.max_tokens: not taken (torii sets no default request parameters per deployment; clients send them)',
        'model_list[2].model_info.id: not taken (torii names deployments <group>/<index>)',
        'model_list[3].litellm_params.stream_timeout: not taken (set timeouts.headersMs or timeouts.streamIdleMs on the deployment)',
        'model_list[6].litellm_params.aws_profile_name: not taken (torii signs with access keys from the options or the AWS_* environment, not profiles)',
        'litellm_settings.num_retries: not taken (router_settings.num_retries is used)',
        'router_settings.fallbacks[1].claude-sonnet[1]: not taken (no model group "not-a-model" was taken)',
        'general_settings.master_key: not taken (set TORII_MASTER_KEY in the environment instead)',
      ]),
    );
    const paths = conversion.warnings.map((warning) => warning.slice(0, warning.indexOf(': ')));
    expect(new Set(paths).size).toBe(paths.length);
    expect(conversion.warnings.join('\n')).not.toContain('gsk-file-value');
  });

  it("keeps environment_variables for references, under the process's own values", () => {
    expect(conversion.environment).toEqual({ GROQ_API_KEY: 'gsk-file-value-not-a-real-key' });
    const input = prepareConfigInput(fixture('litellm-proxy-config.yaml'), { GROQ_API_KEY: 'gsk-process' });
    expect(input.environment.GROQ_API_KEY).toBe('gsk-process');
  });

  it('gives torii a config its own parser accepts', () => {
    const environment = new Proxy({}, { get: (_target, name) => (typeof name === 'string' ? 'value' : undefined) });
    const config = parseGatewayConfig(conversion.config, environment);
    expect(config.modelGroups['gpt-4o']?.deployments[0]?.apiKey).toBe('value');
  });
});

describe('convertLiteLLMConfig on entries torii cannot serve', () => {
  const conversion = convertLiteLLMConfig(fixture('litellm-unsupported.yaml'));

  it('takes what it can and reports each of the rest', () => {
    expect(conversion.problems).toEqual([]);
    expect(Object.keys(conversion.config.modelGroups)).toEqual(['gpt-4o']);
    expect(conversion.config.modelGroups['gpt-4o']?.deployments[0]).toEqual({
      provider: 'openai',
      model: 'gpt-4o',
      apiKey: 'sk-literal-key-that-must-never-be-printed-1234567890',
    });
    expect(conversion.warnings).toEqual([
      'model_list[0].model_name: not taken (torii has no wildcard model routing; list each model)',
      'model_list[1].model_name: not taken (torii has no wildcard model routing; list each model)',
      'model_list[2]: not taken (torii has no provider for LiteLLM\'s "huggingface")',
      'model_list[3]: not taken (torii has no provider for LiteLLM\'s "replicate")',
      'model_list[4]: not taken (cannot tell which provider serves "my-own-model"; write it as <provider>/<model>)',
      'model_list[5].litellm_params.tags: not taken (torii has no tag-based routing)',
      'router_settings.routing_strategy: not taken (torii routes by weight and skips a deployment at its rpm or tpm)',
      'router_settings.model_group_alias: not taken (torii has no model aliases; name the group as clients do)',
      'router_settings.fallbacks[0].hf-mistral: not taken (no model group "hf-mistral" was taken)',
      'some_future_section: not taken (torii has no equivalent)',
    ]);
    expect(conversion.config.routing?.defaultFallbacks).toEqual(['gpt-4o']);
    expect(conversion.warnings.join('\n')).not.toContain('sk-literal');
  });
});

describe('convertLiteLLMConfig on hostile input', () => {
  it('names every value of the wrong type by its path, and never throws', () => {
    const conversion = convertLiteLLMConfig(fixture('litellm-wrong-types.yaml'));
    expect(conversion.problems).toEqual([
      'model_list[0].litellm_params.rpm: expected number, got a string',
      'model_list[0].litellm_params.tpm: Too small: expected number to be >0',
      'model_list[1].model_name: expected string, got a number',
      'model_list[2].litellm_params: expected a mapping, got nothing',
      'model_list[3]: expected a mapping with model_name and litellm_params, got a string',
      'model_list[4].litellm_params.model: expected string, got a list',
      'model_list[5].litellm_params.api_key: "os.environ/" must be followed by an environment variable name',
      'router_settings.num_retries: expected number, got a string',
      'router_settings.fallbacks: expected a list like [{"gpt-4o": ["claude"]}], got a mapping',
      'environment_variables: expected a mapping, got a list',
    ]);
    expect(() => prepareConfigInput(fixture('litellm-wrong-types.yaml'), {})).toThrow(ConfigError);
  });

  it.each([null, 'model_list: []', 42, [], { model_list: { a: 1 } }])('refuses %j with a problem', (raw) => {
    const conversion = convertLiteLLMConfig(raw);
    expect(conversion.problems).toHaveLength(1);
    expect(conversion.config).toEqual({ modelGroups: {} });
  });

  it('converts a 5,000-entry model_list in one pass', () => {
    const model_list = Array.from({ length: 5000 }, (_, index) => ({
      model_name: `model-${index % 100}`,
      litellm_params: { model: `openai/gpt-${index}`, api_key: 'os.environ/OPENAI_API_KEY', rpm: index + 1 },
    }));
    const started = performance.now();
    const conversion = convertLiteLLMConfig({ model_list });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(conversion.problems).toEqual([]);
    expect(Object.keys(conversion.config.modelGroups)).toHaveLength(100);
    expect(conversion.config.modelGroups['model-7']?.deployments).toHaveLength(50);
  });

  it('keeps hostile names as plain keys (no prototype pollution) and ignores deep nesting it does not take', () => {
    let deep: unknown = 'x';
    for (let level = 0; level < 10_000; level++) deep = { nested: deep };
    const conversion = convertLiteLLMConfig({
      model_list: [
        { model_name: '__proto__', litellm_params: { model: 'openai/gpt-4o', api_key: 'k' }, model_info: { deep } },
      ],
      general_settings: deep,
    });
    expect(Object.hasOwn(conversion.config.modelGroups, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).deployments).toBeUndefined();
    expect(conversion.problems).toEqual([]);
  });
});
