/** The master key a server runs with, and whether it was generated because none was configured. */
export interface MasterKey {
  key: string;
  generated: boolean;
}

/**
 * `TORII_MASTER_KEY` when set; otherwise a fresh random key, so the embedded-defaults start needs no setup. A
 * generated key is printed once at start and lives only as long as the process.
 */
export function resolveMasterKey(environment: Record<string, string | undefined>): MasterKey {
  const configured = environment.TORII_MASTER_KEY;
  if (configured !== undefined && configured !== '') return { key: configured, generated: false };
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return { key: `sk-torii-${[...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('')}`, generated: true };
}
