import { setFlagsFromString } from 'node:v8';
import { StartupError } from '../shared/startup-error.ts';

/**
 * How much V8 lets the old generation grow past what survived the last full collection before it collects again,
 * percent, unless the operator chose otherwise (see {@link boundHeapGrowth}).
 */
export const defaultHeapGrowingPercent = 50;

const heapGrowingFlag = /(^|\s)--heap-growing-percent(=|\s|$)/;

/**
 * The `--heap-growing-percent` V8 flag a server process should set, or undefined when the operator already set one
 * (in `NODE_OPTIONS` or on the command line) or asked for V8's own heuristics with `TORII_HEAP_GROWING_PERCENT=0`.
 * `TORII_HEAP_GROWING_PERCENT` (a whole number, 1 to 1000) replaces {@link defaultHeapGrowingPercent}; anything else
 * there is a start-up error naming it.
 *
 * Why: a gateway promotes a steady trickle of short-lived objects to the old generation (the requests in flight at a
 * scavenge, and usage events held for their batch), and V8's default growth factor (up to 4x the live size on a fast
 * machine) lets that garbage pile up for minutes before a full collection, so a worker's RSS climbs 100+ MB and drops
 * back in a sawtooth. With the growth bounded to 1.5x the live size, full collections come every few tens of seconds
 * at a fraction of the size (incremental and concurrent, so no longer pauses) and RSS stays flat under steady load.
 *
 * @example
 * const flag = heapGrowthFlag(process.env, process.execArgv);
 * // flag === '--heap-growing-percent=50'
 */
export function heapGrowthFlag(
  environment: Readonly<Record<string, string | undefined>>,
  execArgv: readonly string[],
): string | undefined {
  if (execArgv.some((argument) => heapGrowingFlag.test(argument))) return undefined;
  if (heapGrowingFlag.test(environment.NODE_OPTIONS ?? '')) return undefined;
  const configured = environment.TORII_HEAP_GROWING_PERCENT?.trim();
  if (configured === undefined || configured === '') return `--heap-growing-percent=${defaultHeapGrowingPercent}`;
  const percent = /^\d+$/.test(configured) ? Number(configured) : Number.NaN;
  if (!Number.isInteger(percent) || percent > 1_000) {
    throw new StartupError(
      'TORII_HEAP_GROWING_PERCENT',
      `must be a whole number from 0 (V8's own heuristics) to 1000, not "${configured}"`,
    );
  }
  return percent === 0 ? undefined : `--heap-growing-percent=${percent}`;
}

/**
 * Applies {@link heapGrowthFlag} to this process's V8 (the flag is read whenever V8 sets its next collection limit,
 * so setting it at start, before load, takes effect). Returns the flag applied, if any.
 */
export function boundHeapGrowth(
  environment: Readonly<Record<string, string | undefined>> = process.env,
  execArgv: readonly string[] = process.execArgv,
): string | undefined {
  const flag = heapGrowthFlag(environment, execArgv);
  if (flag !== undefined) setFlagsFromString(flag);
  return flag;
}
