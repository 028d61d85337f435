import { createDefaultConfig } from '../../src/config/default-config.ts';
import { parseGatewayConfig } from '../../src/config/config-parse.ts';
import { withPresetEnvironment } from '../../src/config/preset-environment.ts';
import type { GatewayConfig } from '../../src/config/config-schema.ts';
import type { ProviderRegistry } from '../../src/canonical/provider-translator.ts';
import { parseConfigText } from './parse-config-text.ts';
import { fileSystemReason, StartupError } from './startup-error.ts';

/** Where a config came from, for the start-up log line. */
export interface LoadedConfig {
  config: GatewayConfig;
  source: string;
}

/**
 * Loads the gateway config for a server runtime: the file named by `TORII_CONFIG` (YAML or JSON) when set,
 * otherwise the embedded default built from the provider keys in the environment. `readText` is the runtime's
 * file reader, so this works unchanged on Node and Deno. A file that cannot be read throws a {@link StartupError}
 * naming TORII_CONFIG; an invalid config throws a ConfigError naming each field. Options a preset reads from the
 * environment (Bedrock's AWS credentials and region) are filled in where the config leaves them out.
 */
export async function loadGatewayConfig(
  environment: Record<string, string | undefined>,
  providers: ProviderRegistry,
  readText: (path: string) => Promise<string>,
): Promise<LoadedConfig> {
  const path = environment.TORII_CONFIG;
  if (path === undefined || path === '') {
    const config = parseGatewayConfig(createDefaultConfig(providers.presets, environment), environment);
    return { config: withPresetEnvironment(config, providers.presets, environment), source: 'embedded defaults' };
  }
  let text: string;
  try {
    text = await readText(path);
  } catch (error) {
    throw new StartupError('TORII_CONFIG', `cannot read the config file "${path}": ${fileSystemReason(error)}`, {
      cause: error,
    });
  }
  const config = parseGatewayConfig(parseConfigText(text, path), environment);
  return { config: withPresetEnvironment(config, providers.presets, environment), source: path };
}
