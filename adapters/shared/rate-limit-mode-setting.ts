import type { RateLimitMode } from '../../src/limits/rate-limiter.ts';
import { StartupError } from './startup-error.ts';

/**
 * `TORII_RATE_LIMIT_MODE` (`leased`, `strict` or `local`), or undefined when unset so the runtime picks its default;
 * anything else throws, naming the variable.
 */
export function readRateLimitMode(environment: Record<string, string | undefined>): RateLimitMode | undefined {
  const mode = environment.TORII_RATE_LIMIT_MODE;
  if (mode === undefined || mode === '') return undefined;
  if (mode !== 'leased' && mode !== 'strict' && mode !== 'local')
    throw new StartupError('TORII_RATE_LIMIT_MODE', `must be leased, strict or local, got "${mode}"`);
  return mode;
}
