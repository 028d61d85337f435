import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { ProviderRegistry } from '../canonical/provider-translator.ts';
import { checkGatewayConfig } from './config-check-report.ts';
import { formatConfigCheckReport } from './config-check-format.ts';

const fixture = (name: string): unknown =>
  parseYaml(readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8'));

/** A registry with presets only: enough for the check to show preset base URLs (src/ cannot import providers/). */
const presetsOnly: ProviderRegistry = {
  translators: {},
  presets: {
    openai: { translator: 'openai-compatible', baseURL: 'https://api.openai.com/v1', apiKeyEnvironmentVariable: 'X' },
  },
};

describe('checkGatewayConfig', () => {
  it('checks a torii config and reports its groups, with the key shown as the variable it comes from', () => {
    const report = checkGatewayConfig(
      {
        modelGroups: {
          fast: { deployments: [{ provider: 'openai', model: 'gpt-4o-mini', apiKey: '${OPENAI_API_KEY}' }] },
        },
      },
      { source: 'torii.yaml', environment: { OPENAI_API_KEY: 'sk-secret-value' } },
    );
    expect(report).toMatchObject({ format: 'torii', valid: true, errors: [], warnings: [] });
    expect(report.modelGroups[0]?.deployments[0]?.apiKey).toBe('${OPENAI_API_KEY} (set)');
    expect(report.environmentVariables).toEqual([
      { name: 'OPENAI_API_KEY', status: 'set', paths: ['modelGroups.fast.deployments[0].apiKey'] },
    ]);
    expect(JSON.stringify(report) + formatConfigCheckReport(report)).not.toContain('sk-secret-value');
  });

  it('converts a LiteLLM config, names unset variables with the entry they come from, and masks literal keys', () => {
    const report = checkGatewayConfig(fixture('litellm-unsupported.yaml'), {
      source: 'litellm.yaml',
      environment: {},
    });
    expect(report.format).toBe('litellm');
    expect(report.valid).toBe(true);
    expect(report.warnings).toHaveLength(10);
    const text = formatConfigCheckReport(report);
    expect(text).toContain('litellm.yaml: valid (a LiteLLM proxy config, converted)');
    expect(text).toContain('key (literal, hidden)');
    expect(text).not.toContain('sk-literal-key');

    const documented = checkGatewayConfig(fixture('litellm-proxy-config.yaml'), { source: 'c.yaml', environment: {} });
    expect(documented.valid).toBe(false);
    expect(documented.errors).toContain(
      'modelGroups.gpt-4o.deployments[0].apiKey (from model_list[0]): environment variable AZURE_API_KEY_EU is not set',
    );
    expect(documented.environmentVariables.find((variable) => variable.name === 'GROQ_API_KEY')?.status).toBe('file');
    expect(JSON.stringify(documented) + formatConfigCheckReport(documented)).not.toContain('gsk-file-value');
  });

  it('reports schema errors with their paths, and LiteLLM type errors with theirs', () => {
    const torii = checkGatewayConfig(
      { modelGroups: { fast: { deployments: [{ provider: 'openai', model: 'm', weight: 'heavy' }] } } },
      { source: 't', environment: {} },
    );
    expect(torii.valid).toBe(false);
    expect(torii.errors[0]).toMatch(/^modelGroups\.fast\.deployments\[0\]\.weight: /);
    const litellm = checkGatewayConfig(fixture('litellm-wrong-types.yaml'), { source: 'l', environment: {} });
    expect(litellm.valid).toBe(false);
    expect(litellm.errors).toContain('model_list[1].model_name: expected string, got a number');
  });

  it('resolves providers when given a registry: an unknown one is an error naming it', () => {
    const report = checkGatewayConfig(
      { modelGroups: { fast: { deployments: [{ provider: 'nope', model: 'm', apiKey: 'k' }] } } },
      { source: 't', environment: {}, providers: presetsOnly },
    );
    expect(report.errors[0]).toMatch(/^modelGroups\.fast\.deployments\[0\]\.provider: unknown provider "nope"/);
  });

  it.each([
    ['null', null],
    ['a string', 'modelGroups: {}'],
    ['a list', [1, 2]],
    ['a number', 7],
  ])('answers %s with an error, never a throw', (_name, raw) => {
    const report = checkGatewayConfig(raw, { source: 'x', environment: {} });
    expect(report.valid).toBe(false);
    expect(report.errors[0]).toMatch(/^\(root\): /);
  });

  it('refuses nesting deeper than it walks, without overflowing the stack', () => {
    let deep: unknown = 'x';
    for (let level = 0; level < 100_000; level++) deep = [deep];
    const report = checkGatewayConfig({ modelGroups: {}, server: deep }, { source: 'x', environment: {} });
    expect(report.valid).toBe(false);
    expect(report.errors.some((error) => error.includes('nested deeper than 64 levels'))).toBe(true);
  });

  it('lists at most 200 deployments in text, all of them in the report', () => {
    const model_list = Array.from({ length: 5000 }, (_, index) => ({
      model_name: `model-${index}`,
      litellm_params: { model: `openai/gpt-${index}`, api_key: 'os.environ/OPENAI_API_KEY' },
    }));
    const report = checkGatewayConfig({ model_list }, { source: 'x', environment: { OPENAI_API_KEY: 'k' } });
    expect(report.valid).toBe(true);
    expect(report.modelGroups).toHaveLength(5000);
    expect(formatConfigCheckReport(report)).toContain('... 4800 more deployment(s)');
  });
});
