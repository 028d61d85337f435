import { describe, expect, it } from 'vitest';
import type { ProviderPreset } from '../canonical/provider-translator.ts';
import { parseGatewayConfig } from './config-parse.ts';
import { withPresetEnvironment } from './preset-environment.ts';

const presets: Record<string, ProviderPreset> = {
  cloud: {
    translator: 'cloud',
    baseURL: '',
    keyOptional: true,
    optionEnvironmentVariables: { region: 'CLOUD_REGION' },
    credentialEnvironmentVariables: { accessKeyId: 'CLOUD_KEY_ID', secretAccessKey: 'CLOUD_SECRET' },
  },
  plain: { translator: 'plain', baseURL: 'https://plain.example' },
};
const environment = { CLOUD_REGION: 'eu-west-1', CLOUD_KEY_ID: 'AKIAENV', CLOUD_SECRET: 'env-secret', EMPTY: '' };

function optionsOf(deployment: Record<string, unknown>, env: Record<string, string> = environment) {
  const config = parseGatewayConfig({ modelGroups: { group: { deployments: [{ model: 'm', ...deployment }] } } });
  return withPresetEnvironment(config, presets, env).modelGroups.group!.deployments[0]!.options;
}

describe('withPresetEnvironment', () => {
  it('fills the region and the credentials a deployment leaves out', () => {
    expect(optionsOf({ provider: 'cloud' })).toEqual({
      region: 'eu-west-1',
      accessKeyId: 'AKIAENV',
      secretAccessKey: 'env-secret',
    });
  });

  it("keeps the config's own values: an option it sets, and its own credentials, never completed from elsewhere", () => {
    expect(optionsOf({ provider: 'cloud', options: { region: 'us-east-1', accessKeyId: 'AKIACONFIG' } })).toEqual({
      region: 'us-east-1',
      accessKeyId: 'AKIACONFIG',
    });
  });

  it('reads no credentials for a deployment with an apiKey, and nothing from unset or empty variables', () => {
    expect(optionsOf({ provider: 'cloud', apiKey: 'bedrock-api-key' })).toEqual({ region: 'eu-west-1' });
    expect(optionsOf({ provider: 'cloud' }, { CLOUD_REGION: '' })).toBeUndefined();
  });

  it('leaves deployments of other presets as they are', () => {
    expect(optionsOf({ provider: 'plain' })).toBeUndefined();
  });
});
