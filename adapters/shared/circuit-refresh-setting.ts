import { defaultCircuitRefreshMs } from '../../src/routing/polled-circuit-bus.ts';

/** The name of the setting: how often a process reads the shared circuit store (Workers, Deno with Upstash). */
export const circuitRefreshVariable = 'TORII_CIRCUIT_REFRESH_MS';

/**
 * Reads `TORII_CIRCUIT_REFRESH_MS`: whole ms from 100 to 60000, default 1000 (a circuit change reaches every other
 * process within it, plus one store call). Answers the value, or the problem with a malformed one.
 */
export function readCircuitRefreshMs(value: unknown): { ms: number } | { problem: string } {
  if (value === undefined || value === '') return { ms: defaultCircuitRefreshMs };
  const parsed = typeof value === 'string' ? Number(value) : Number.NaN;
  if (!Number.isInteger(parsed) || parsed < 100 || parsed > 60_000)
    return { problem: `must be a whole number of ms from 100 to 60000, got "${String(value)}"` };
  return { ms: parsed };
}
