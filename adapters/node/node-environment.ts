/** Server settings read from the environment of a Node process. */
export interface NodeServerSettings {
  port: number;
  hostname: string | undefined;
  workers: number;
  shutdownGraceMs: number;
}

function positiveInteger(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0)
    throw new Error(`${name} must be a non-negative integer, got "${value}".`);
  return parsed;
}

/**
 * Reads PORT (default 8787), HOST, TORII_WORKERS (default: one per core; 1 = no cluster) and
 * TORII_SHUTDOWN_GRACE_MS (default 25000).
 */
export function readNodeServerSettings(environment: NodeJS.ProcessEnv, cores: number): NodeServerSettings {
  const workers = positiveInteger(environment.TORII_WORKERS, 'TORII_WORKERS', cores);
  return {
    port: positiveInteger(environment.PORT, 'PORT', 8787),
    hostname: environment.HOST || undefined,
    workers: workers === 0 ? cores : workers,
    shutdownGraceMs: positiveInteger(environment.TORII_SHUTDOWN_GRACE_MS, 'TORII_SHUTDOWN_GRACE_MS', 25_000),
  };
}
