import { StartupError } from '../shared/startup-error.ts';

/** What `torii-gateway` (the package's `bin`, `node dist/server.js`) was asked to do. */
export type Command =
  | { kind: 'serve'; environment: Record<string, string> }
  | { kind: 'check'; arguments: string[] }
  | { kind: 'help' }
  | { kind: 'version' };

/** The usage text of `torii-gateway --help`. */
export const commandLineUsage = `Usage:
  torii-gateway [--config FILE] [--port PORT] [--host HOST] [--workers N]
      Serve the gateway (FILE: a torii config or a LiteLLM proxy config.yaml; default: the embedded defaults).
  torii-gateway check [--config FILE] [--json] [--strict]
      Validate a config (torii's or LiteLLM's) and print what it resolved: model groups, deployments, routing, the
      variables it reads, and what of a LiteLLM config was not taken.
  torii-gateway --help | --version

Every option has an environment variable (TORII_CONFIG, PORT, HOST, TORII_WORKERS); the option wins.`;

/** The options that set an environment variable, and the variable. */
const optionVariables: Record<string, string> = {
  '--config': 'TORII_CONFIG',
  '--port': 'PORT',
  '--host': 'HOST',
  '--workers': 'TORII_WORKERS',
};

/**
 * Reads the command line of `torii-gateway`: `serve` (the default) with options, each of which stands for an
 * environment variable (returned in `environment`, for the caller to apply before reading settings), or `check` with
 * the arguments for the check command (config-check-command.ts reads them). `--config=FILE` and `--config FILE` both
 * work. An unknown option or command is a {@link StartupError}.
 *
 * @example
 * parseCommandLine(['--config', 'torii.yaml']); // { kind: 'serve', environment: { TORII_CONFIG: 'torii.yaml' } }
 */
export function parseCommandLine(argumentsGiven: readonly string[]): Command {
  if (argumentsGiven[0] === 'check') return { kind: 'check', arguments: argumentsGiven.slice(1) };
  const environment: Record<string, string> = {};
  for (let index = 0; index < argumentsGiven.length; index++) {
    const argument = argumentsGiven[index] as string;
    if (argument === '--help' || argument === '-h') return { kind: 'help' };
    if (argument === '--version' || argument === '-v') return { kind: 'version' };
    if (index === 0 && argument === 'serve') continue;
    const [name, inlineValue] = argument.startsWith('--') ? splitOption(argument) : [argument, undefined];
    const variable = optionVariables[name];
    if (variable === undefined) {
      throw new StartupError(
        'command line',
        `unknown ${argument.startsWith('-') ? 'option' : 'command'} "${name}" (see torii-gateway --help)`,
      );
    }
    const value = inlineValue ?? argumentsGiven[++index];
    if (value === undefined || value === '') throw new StartupError('command line', `${name} needs a value`);
    environment[variable] = value;
  }
  return { kind: 'serve', environment };
}

function splitOption(argument: string): [string, string | undefined] {
  const equals = argument.indexOf('=');
  return equals === -1 ? [argument, undefined] : [argument.slice(0, equals), argument.slice(equals + 1)];
}
