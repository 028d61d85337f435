import { StartupError } from './startup-error.ts';

/** The master key a server runs with, and whether it was generated because none was configured. */
export interface MasterKey {
  key: string;
  generated: boolean;
}

/** The shortest master key accepted (the authenticators refuse shorter ones too). */
export const minimumMasterKeyLength = 8;

/**
 * `TORII_MASTER_KEY` when set; otherwise a fresh random key, so the embedded-defaults start needs no setup. A
 * generated key is printed once at start and lives only as long as the process. A configured key shorter than
 * {@link minimumMasterKeyLength} throws a {@link StartupError} naming the variable (the key itself is never printed).
 */
export function resolveMasterKey(environment: Record<string, string | undefined>): MasterKey {
  const configured = environment.TORII_MASTER_KEY;
  if (configured !== undefined && configured !== '') {
    if (configured.length < minimumMasterKeyLength)
      throw new StartupError(
        'TORII_MASTER_KEY',
        `must be at least ${minimumMasterKeyLength} characters long, got ${configured.length}`,
      );
    return { key: configured, generated: false };
  }
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return { key: `sk-torii-${[...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('')}`, generated: true };
}
