import type { ProviderPreset } from '../canonical/provider-translator.ts';
import type { GatewayConfig } from './config-schema.ts';

/**
 * Fills deployment options from the environment where the deployment's preset says where they live and the config
 * leaves them out: single options (`AWS_REGION` for Bedrock's `region`), and credentials as a set, only for a
 * deployment with no `apiKey` and no credential of its own (so an explicit key or credential in the config always
 * wins, and a half-configured pair is never completed from elsewhere). Unset or empty variables fill nothing.
 *
 * @example
 * const config = withPresetEnvironment(parseGatewayConfig(raw, process.env), builtinProviders.presets, process.env);
 */
export function withPresetEnvironment(
  config: GatewayConfig,
  presets: Readonly<Record<string, ProviderPreset>>,
  environment: Readonly<Record<string, string | undefined>>,
): GatewayConfig {
  const valueOf = (variable: string) => {
    const value = environment[variable];
    return value === undefined || value === '' ? undefined : value;
  };
  const modelGroups: GatewayConfig['modelGroups'] = {};
  for (const [name, group] of Object.entries(config.modelGroups)) {
    modelGroups[name] = {
      ...group,
      deployments: group.deployments.map((deployment) => {
        const preset = Object.hasOwn(presets, deployment.provider) ? presets[deployment.provider] : undefined;
        if (preset?.optionEnvironmentVariables === undefined && preset?.credentialEnvironmentVariables === undefined)
          return deployment;
        const options: Record<string, unknown> = { ...deployment.options };
        for (const [option, variable] of Object.entries(preset.optionEnvironmentVariables ?? {})) {
          const value = valueOf(variable);
          if (options[option] === undefined && value !== undefined) options[option] = value;
        }
        const credentials = Object.entries(preset.credentialEnvironmentVariables ?? {});
        const ownCredential = credentials.some(([option]) => options[option] !== undefined);
        if (deployment.apiKey === undefined && !ownCredential) {
          for (const [option, variable] of credentials) {
            const value = valueOf(variable);
            if (value !== undefined) options[option] = value;
          }
        }
        return Object.keys(options).length === 0 ? deployment : { ...deployment, options };
      }),
    };
  }
  return { ...config, modelGroups };
}
