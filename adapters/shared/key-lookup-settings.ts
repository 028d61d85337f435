import type { KeyStoreLookupLimits } from '../../src/auth/key-store-lookup-batcher.ts';
import { StartupError } from './startup-error.ts';

function wholeNumber(environment: Record<string, string | undefined>, name: string): number | undefined {
  const value = environment[name];
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1)
    throw new StartupError(name, `must be a positive integer, got "${value}"`);
  return parsed;
}

/**
 * The limits on key-store lookups of keys missing from every cache: `TORII_KEY_LOOKUP_CONCURRENCY` (queries in
 * flight per process, and per host in a cluster; default 4) and `TORII_KEY_LOOKUP_QUEUE_MAX` (hashes waiting per
 * process before a 503 `key_lookup_busy`; default 10,000). Unset variables keep the defaults; anything but a
 * positive integer throws, naming the variable.
 *
 * @example
 * const keyLookup = readKeyLookupLimits(process.env);
 */
export function readKeyLookupLimits(environment: Record<string, string | undefined>): KeyStoreLookupLimits {
  const maxConcurrent = wholeNumber(environment, 'TORII_KEY_LOOKUP_CONCURRENCY');
  const maxQueued = wholeNumber(environment, 'TORII_KEY_LOOKUP_QUEUE_MAX');
  return {
    ...(maxConcurrent === undefined ? {} : { maxConcurrent }),
    ...(maxQueued === undefined ? {} : { maxQueued }),
  };
}
