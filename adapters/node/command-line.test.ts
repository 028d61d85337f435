import { describe, expect, it } from 'vitest';
import { parseCommandLine } from './command-line.ts';

describe('parseCommandLine', () => {
  it('serves by default, with each option standing for its environment variable', () => {
    expect(parseCommandLine([])).toEqual({ kind: 'serve', environment: {} });
    expect(parseCommandLine(['--config', 'torii.yaml', '--port=9000', '--host', '0.0.0.0', '--workers', '2'])).toEqual({
      kind: 'serve',
      environment: { TORII_CONFIG: 'torii.yaml', PORT: '9000', HOST: '0.0.0.0', TORII_WORKERS: '2' },
    });
    expect(parseCommandLine(['serve', '--config=a.yaml'])).toEqual({
      kind: 'serve',
      environment: { TORII_CONFIG: 'a.yaml' },
    });
  });

  it('reads check, help and version', () => {
    expect(parseCommandLine(['check', '--config', 'litellm.yaml', '--json'])).toEqual({
      kind: 'check',
      arguments: ['--config', 'litellm.yaml', '--json'],
    });
    expect(parseCommandLine(['--help'])).toEqual({ kind: 'help' });
    expect(parseCommandLine(['serve', '-h'])).toEqual({ kind: 'help' });
    expect(parseCommandLine(['--version'])).toEqual({ kind: 'version' });
  });

  it('refuses unknown options and commands, and options without a value, naming them', () => {
    expect(() => parseCommandLine(['--confg', 'x'])).toThrow('unknown option "--confg"');
    expect(() => parseCommandLine(['start'])).toThrow('unknown command "start"');
    expect(() => parseCommandLine(['--config'])).toThrow('--config needs a value');
    expect(() => parseCommandLine(['--port='])).toThrow('--port needs a value');
    expect(() => parseCommandLine(['serve', 'check'])).toThrow('unknown command "check"');
  });
});
