import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.ts';
import { parseGatewayConfig } from './config-parse.ts';

function configError(raw: unknown, environment: Record<string, string | undefined> = {}): ConfigError {
  try {
    parseGatewayConfig(raw, environment);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const deployment = (fields: Record<string, unknown> = {}) => ({
  provider: 'openai',
  model: 'gpt-4o-mini',
  apiKey: 'sk-test',
  ...fields,
});
const oneGroup = (fields: Record<string, unknown> = {}) => ({
  modelGroups: { fast: { deployments: [deployment(fields)] } },
});

describe('parseGatewayConfig', () => {
  it('returns a valid config as given', () => {
    const raw = {
      modelGroups: {
        fast: {
          description: 'cheap and quick',
          deployments: [
            { provider: 'groq', model: 'llama-3.3-70b-versatile', apiKey: 'gsk', weight: 3 },
            {
              provider: 'openai-compatible',
              model: 'llama3',
              baseURL: 'http://localhost:8000/v1',
              headers: { 'x-team': 'a' },
              options: { extra: true },
            },
          ],
        },
      },
      server: { bodyLimitBytes: 1024, upstreamTimeoutMs: 5000 },
    };
    expect(parseGatewayConfig(raw)).toEqual(raw);
  });

  it('substitutes ${VAR} references in any string, including inside longer text', () => {
    const config = parseGatewayConfig(oneGroup({ apiKey: '${KEY}', baseURL: 'https://${HOST}/v1' }), {
      KEY: 'sk-from-env',
      HOST: 'llm.internal',
    });
    expect(config.modelGroups.fast?.deployments[0]).toMatchObject({
      apiKey: 'sk-from-env',
      baseURL: 'https://llm.internal/v1',
    });
  });

  it('uses the ${VAR:-default} fallback when the variable is unset or empty, and the value when set', () => {
    const raw = oneGroup({ apiKey: '${KEY:-sk-default}', model: '${MODEL:-}gpt' });
    expect(parseGatewayConfig(raw, {}).modelGroups.fast?.deployments[0]).toMatchObject({
      apiKey: 'sk-default',
      model: 'gpt',
    });
    expect(parseGatewayConfig(raw, { KEY: '' }).modelGroups.fast?.deployments[0]?.apiKey).toBe('sk-default');
    expect(parseGatewayConfig(raw, { KEY: 'sk-set' }).modelGroups.fast?.deployments[0]?.apiKey).toBe('sk-set');
  });

  it('names the field holding a reference to a missing variable, for every such field', () => {
    const error = configError({
      modelGroups: {
        fast: { deployments: [deployment({ apiKey: '${OPENAI_API_KEY}' }), deployment({ headers: { x: '${TEAM}' } })] },
      },
    });
    expect(error.problems).toEqual([
      'modelGroups.fast.deployments[0].apiKey: environment variable OPENAI_API_KEY is not set',
      'modelGroups.fast.deployments[1].headers.x: environment variable TEAM is not set',
    ]);
    expect(error.message).toContain('modelGroups.fast.deployments[0].apiKey: environment variable OPENAI_API_KEY');
    expect(error.name).toBe('ConfigError');
  });

  it('leaves strings without references and non-string values untouched', () => {
    const config = parseGatewayConfig(oneGroup({ apiKey: '$KEY {KEY} $', weight: 2 }), { KEY: 'no' });
    expect(config.modelGroups.fast?.deployments[0]).toMatchObject({ apiKey: '$KEY {KEY} $', weight: 2 });
  });

  it('reports an unknown field with the path of the object holding it and the key', () => {
    const error = configError(oneGroup({ bogus: 1 }));
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toMatch(/^modelGroups\.fast\.deployments\[0\]: .*bogus/);
  });

  it('reports an unknown top-level field at the root', () => {
    const error = configError({ modelGroups: {}, extra: true });
    expect(error.problems[0]).toMatch(/^\(root\): .*extra/);
  });

  it('reports a wrong type with the field path', () => {
    const error = configError(oneGroup({ weight: 'heavy' }));
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toMatch(/^modelGroups\.fast\.deployments\[0\]\.weight: .*number/);
  });

  it('reports an empty deployments list with the field path', () => {
    const error = configError({ modelGroups: { fast: { deployments: [] } } });
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toMatch(/^modelGroups\.fast\.deployments: /);
  });

  it.each(['not a url', 'ftp://example.com/v1'])('reports a bad baseURL %j with the field path', (baseURL) => {
    const error = configError(oneGroup({ baseURL }));
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toMatch(/^modelGroups\.fast\.deployments\[0\]\.baseURL: /);
  });

  it('reports several problems at once', () => {
    const error = configError({
      modelGroups: {
        fast: { deployments: [deployment({ weight: -1, baseURL: 'nope' })] },
        empty: { deployments: [] },
      },
      server: { bodyLimitBytes: 1.5 },
    });
    const paths = error.problems.map((problem) => problem.slice(0, problem.indexOf(': ')));
    expect(paths.sort()).toEqual(
      [
        'modelGroups.empty.deployments',
        'modelGroups.fast.deployments[0].baseURL',
        'modelGroups.fast.deployments[0].weight',
        'server.bodyLimitBytes',
      ].sort(),
    );
    for (const problem of error.problems) expect(error.message).toContain(`  - ${problem}`);
  });

  it('rejects a config that is not an object', () => {
    expect(configError('modelGroups: {}').problems[0]).toMatch(/^\(root\): /);
    expect(configError(null).problems[0]).toMatch(/^\(root\): /);
  });
});
