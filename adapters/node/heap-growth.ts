import { setFlagsFromString } from 'node:v8';
import { StartupError } from '../shared/startup-error.ts';

const heapGrowingFlag = /(^|\s)--heap-growing-percent(=|\s|$)/;

/**
 * The `--heap-growing-percent` V8 flag a server process should set for `TORII_HEAP_GROWING_PERCENT` (a whole number,
 * 1 to 1000; anything else is a start-up error naming it), or undefined when it is unset or 0 (V8's own heuristics,
 * the default) or the operator already set the flag in `NODE_OPTIONS` or on the command line.
 *
 * The trade-off, measured on one pinned core at 1,000 rps: a gateway promotes a steady trickle of short-lived objects
 * to the old generation (the requests in flight at a scavenge, usage events held for their batch), and V8's default
 * growth factor (up to 4x the live size) lets that garbage pile up for minutes before a full collection, so RSS saws
 * by 100+ MB (165-290 MB over 5-minute cycles). `50` held it at 200-206 MB, but after a minute of full load the
 * frequent full collections (their concurrent marking competes for the same core) raised the p99 of streams at
 * 1,000 rps from 6-40 ms to 60-80 ms. So it is opt-in, for hosts where memory is tighter than latency.
 *
 * @example
 * const flag = heapGrowthFlag({ TORII_HEAP_GROWING_PERCENT: '50' }, process.execArgv);
 * // flag === '--heap-growing-percent=50'
 */
export function heapGrowthFlag(
  environment: Readonly<Record<string, string | undefined>>,
  execArgv: readonly string[],
): string | undefined {
  if (execArgv.some((argument) => heapGrowingFlag.test(argument))) return undefined;
  if (heapGrowingFlag.test(environment.NODE_OPTIONS ?? '')) return undefined;
  const configured = environment.TORII_HEAP_GROWING_PERCENT?.trim();
  if (configured === undefined || configured === '') return undefined;
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
