import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../../src/config/config-error.ts';

/**
 * Parses the text of a config file: YAML for `.yaml`/`.yml`, JSON otherwise. Syntax errors become a ConfigError
 * naming the file. (YAML parsing lives in adapters so the Worker bundle, which receives an object, never carries it.)
 */
export function parseConfigText(text: string, fileName: string): unknown {
  try {
    return /\.ya?ml$/i.test(fileName) ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    throw new ConfigError([`${fileName}: ${error instanceof Error ? error.message : String(error)}`]);
  }
}
