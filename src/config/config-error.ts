/**
 * A config that cannot be used: raised at start, never over HTTP. `problems` name each field and its reason, so an
 * operator can fix them all in one go.
 */
export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`Invalid torii config:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}
