import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runConfigCheck } from './config-check-command.ts';

const fixtures = fileURLToPath(new URL('../../src/config/__fixtures__/', import.meta.url));

async function run(argv: string[], environment: Record<string, string> = {}) {
  let text = '';
  const code = await runConfigCheck(argv, environment, { write: (chunk: string) => (text += chunk) });
  return { code, text };
}

const documentedEnvironment = {
  AZURE_API_KEY_EU: 'az-eu-secret',
  AZURE_API_KEY_CA: 'az-ca-secret',
  OPENAI_API_KEY: 'sk-openai-secret',
  OPENAI_ORG_ID: 'org-1',
  ANTHROPIC_API_KEY: 'sk-ant-secret',
  AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  VERTEX_SERVICE_ACCOUNT_JSON: JSON.stringify({
    type: 'service_account',
    client_email: 'torii@my-project.iam.gserviceaccount.com',
    private_key: '-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n',
  }),
};

describe('runConfigCheck', () => {
  it('exits 0 for a LiteLLM config that resolves, printing what it resolved and no secret', async () => {
    const { code, text } = await run(
      ['check', '--config', `${fixtures}litellm-proxy-config.yaml`],
      documentedEnvironment,
    );
    expect(text).toContain('valid (a LiteLLM proxy config, converted)');
    expect(code).toBe(0);
    expect(text).toContain('azure gpt-4o-eu at https://my-endpoint-europe-berri-992.openai.azure.com/');
    expect(text).toContain('general_settings.master_key: not taken');
    for (const secret of ['az-eu-secret', 'sk-openai-secret', 'sk-ant-secret', 'aws-secret', 'PRIVATE KEY', 'gsk-file'])
      expect(text).not.toContain(secret);
  });

  it('exits 1 under --strict when parts were not taken, and prints JSON with --json', async () => {
    const file = `${fixtures}litellm-proxy-config.yaml`;
    expect((await run(['--config', file, '--strict'], documentedEnvironment)).code).toBe(1);
    const { code, text } = await run([file, '--json'], documentedEnvironment);
    expect(code).toBe(0);
    expect(JSON.parse(text)).toMatchObject({ format: 'litellm', valid: true });
  });

  it('exits 1 with the errors of an invalid file, an unreadable file or bad YAML', async () => {
    const invalid = await run(['--config', `${fixtures}litellm-wrong-types.yaml`]);
    expect(invalid.code).toBe(1);
    expect(invalid.text).toContain('model_list[0].litellm_params.rpm: expected number, got a string');
    const missing = await run(['--config', `${fixtures}does-not-exist.yaml`]);
    expect(missing).toMatchObject({ code: 1 });
    expect(missing.text).toContain('cannot read');
    let text = '';
    const broken = await runConfigCheck(
      ['--config', 'broken.yaml'],
      {},
      { write: (chunk: string) => (text += chunk) },
      { readText: async () => 'model_list: [\n  - {' },
    );
    expect(broken).toBe(1);
    expect(text).toContain('broken.yaml');
  });

  it('exits 2 for bad usage, and reads TORII_CONFIG when no file is given', async () => {
    expect((await run(['--bogus'])).code).toBe(2);
    expect((await run([])).code).toBe(2);
    expect((await run(['--config'])).code).toBe(2);
    const fromEnvironment = await run([], {
      ...documentedEnvironment,
      TORII_CONFIG: `${fixtures}litellm-proxy-config.yaml`,
    });
    expect(fromEnvironment.code).toBe(0);
  });
});
