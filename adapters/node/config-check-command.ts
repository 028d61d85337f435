import { readFile } from 'node:fs/promises';
import { builtinProviders } from '../../providers/index.ts';
import type { ProviderRegistry } from '../../src/canonical/provider-translator.ts';
import { checkGatewayConfig } from '../../src/config/config-check-report.ts';
import { formatConfigCheckReport } from '../../src/config/config-check-format.ts';
import { ConfigError } from '../../src/config/config-error.ts';
import { parseConfigText } from '../shared/parse-config-text.ts';
import { fileSystemReason } from '../shared/startup-error.ts';

/** Where the command writes: `process.stdout` in the CLI, a string collector in tests. */
export interface ConfigCheckOutput {
  write(text: string): unknown;
}

/** What the command reads besides its arguments; the defaults are the real file system and built-in providers. */
export interface ConfigCheckDependencies {
  readText?: (path: string) => Promise<string>;
  providers?: ProviderRegistry;
}

/** The command's usage text. */
export const configCheckUsage = `Usage: torii-gateway check [--config <file>] [--json] [--strict]

Validates a torii config or a LiteLLM proxy config.yaml (recognised by its model_list) as the gateway would at
start, and prints what it resolved: model groups, deployments (secrets masked), routing, fallbacks, the environment
variables it reads and whether they are set, and every LiteLLM part torii does not take.

  --config <file>  the file to check (default: TORII_CONFIG)
  --json           print the report as JSON
  --strict         also fail when a LiteLLM part was not taken

Exit status: 0 valid, 1 invalid (or not taken under --strict), 2 bad usage.
`;

interface ConfigCheckArguments {
  file: string | undefined;
  json: boolean;
  strict: boolean;
}

/** Reads the arguments, or returns the usage problem. */
function readArguments(argv: readonly string[]): ConfigCheckArguments | { problem: string } | { help: true } {
  const parsed: ConfigCheckArguments = { file: undefined, json: false, strict: false };
  const rest = argv[0] === 'check' ? argv.slice(1) : argv;
  for (let index = 0; index < rest.length; index++) {
    const argument = rest[index] as string;
    if (argument === '--help' || argument === '-h') return { help: true };
    else if (argument === '--json') parsed.json = true;
    else if (argument === '--strict') parsed.strict = true;
    else if (argument === '--config' || argument === '-c') {
      const value = rest[++index];
      if (value === undefined || value === '') return { problem: `${argument} needs a file name` };
      parsed.file = value;
    } else if (argument.startsWith('--config=')) parsed.file = argument.slice('--config='.length);
    else if (!argument.startsWith('-') && parsed.file === undefined) parsed.file = argument;
    else return { problem: `unknown argument "${argument}"` };
  }
  return parsed;
}

/**
 * `torii-gateway check --config <file>`: validates a config (torii's or LiteLLM's) in `environment` and writes the
 * report to `output`. Resolves to the exit code: 0 when the gateway would start with it, 1 when not (each error
 * named by its path), 2 for bad usage. Never throws for anything in the file.
 *
 * @example
 * process.exitCode = await runConfigCheck(process.argv.slice(2), process.env, process.stdout);
 */
export async function runConfigCheck(
  argv: readonly string[],
  environment: Readonly<Record<string, string | undefined>>,
  output: ConfigCheckOutput,
  dependencies: ConfigCheckDependencies = {},
): Promise<number> {
  const parsed = readArguments(argv);
  if ('help' in parsed) {
    output.write(configCheckUsage);
    return 0;
  }
  if ('problem' in parsed) {
    output.write(`torii-gateway check: ${parsed.problem}\n\n${configCheckUsage}`);
    return 2;
  }
  const file = parsed.file ?? environment.TORII_CONFIG;
  if (file === undefined || file === '') {
    output.write(`torii-gateway check: give the file to check with --config <file> (or set TORII_CONFIG)\n`);
    return 2;
  }
  let raw: unknown;
  try {
    const text = await (dependencies.readText ?? ((path: string) => readFile(path, 'utf8')))(file);
    raw = parseConfigText(text, file);
  } catch (error) {
    const reason =
      error instanceof ConfigError ? error.problems.join('; ') : `cannot read "${file}": ${fileSystemReason(error)}`;
    output.write(parsed.json ? `${JSON.stringify({ source: file, valid: false, errors: [reason] })}\n` : `${reason}\n`);
    return 1;
  }
  const report = checkGatewayConfig(raw, {
    source: file,
    environment,
    providers: dependencies.providers ?? builtinProviders,
  });
  output.write(parsed.json ? `${JSON.stringify(report, null, 2)}\n` : formatConfigCheckReport(report));
  if (!report.valid) return 1;
  return parsed.strict && report.warnings.length > 0 ? 1 : 0;
}
