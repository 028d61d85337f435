import { createDefaultConfig } from '../../src/config/default-config.ts';
import { parseGatewayConfig } from '../../src/config/config-parse.ts';
import { ConfigError } from '../../src/config/config-error.ts';
import { prepareConfigInput, withLiteLLMOrigin, type ConfigFormat } from '../../src/config/config-input.ts';
import { withPresetEnvironment } from '../../src/config/preset-environment.ts';
import type { GatewayConfig } from '../../src/config/config-schema.ts';
import type { ProviderRegistry } from '../../src/canonical/provider-translator.ts';
import { parseConfigText } from './parse-config-text.ts';
import { fileSystemReason, StartupError } from './startup-error.ts';

/** Where a config came from, for the start-up log line. */
export interface LoadedConfig {
  config: GatewayConfig;
  source: string;
  /** `litellm` when the file was a LiteLLM proxy config, converted at load. */
  format: ConfigFormat;
  /**
   * What a LiteLLM file held that torii did not take, each `<path>: not taken (<why>)` (never a value); the server
   * logs them once at start. Empty for torii's own format.
   */
  warnings: string[];
}

/**
 * Loads the gateway config for a server runtime: the file named by `TORII_CONFIG` (YAML or JSON) when set,
 * otherwise the embedded default built from the provider keys in the environment. `readText` is the runtime's
 * file reader, so this works unchanged on Node and Deno. A file that cannot be read throws a {@link StartupError}
 * naming TORII_CONFIG; an invalid config throws a ConfigError naming each field. A LiteLLM proxy config is recognised
 * by its top-level `model_list` and converted (src/config/litellm-config.ts); what it could not take is returned in
 * `warnings`. Options a preset reads from the environment (Bedrock's AWS credentials and region) are filled in where
 * the config leaves them out.
 */
export async function loadGatewayConfig(
  environment: Record<string, string | undefined>,
  providers: ProviderRegistry,
  readText: (path: string) => Promise<string>,
): Promise<LoadedConfig> {
  const path = environment.TORII_CONFIG;
  if (path === undefined || path === '') {
    const config = parseGatewayConfig(createDefaultConfig(providers.presets, environment), environment);
    return {
      config: withPresetEnvironment(config, providers.presets, environment),
      source: 'embedded defaults',
      format: 'torii',
      warnings: [],
    };
  }
  let text: string;
  try {
    text = await readText(path);
  } catch (error) {
    throw new StartupError('TORII_CONFIG', `cannot read the config file "${path}": ${fileSystemReason(error)}`, {
      cause: error,
    });
  }
  // A LiteLLM proxy config (a top-level `model_list`) is converted; its `environment_variables` fill unset variables.
  const input = prepareConfigInput(parseConfigText(text, path), environment);
  let config: GatewayConfig;
  try {
    config = parseGatewayConfig(input.raw, input.environment);
  } catch (error) {
    if (!(error instanceof ConfigError) || input.format === 'torii') throw error;
    throw new ConfigError(error.problems.map((problem) => withLiteLLMOrigin(problem, input.origins)));
  }
  return {
    config: withPresetEnvironment(config, providers.presets, input.environment),
    source: path,
    format: input.format,
    warnings: input.warnings,
  };
}
