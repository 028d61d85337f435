import type { GatewayLogger } from '../../src/services.ts';

/** A logger that keeps what it is told, for assertions. */
export function recordingLogger(): { logger: GatewayLogger; lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = [];
  const logger: GatewayLogger = {
    info: (message) => lines.push({ level: 'info', message }),
    warn: (message) => lines.push({ level: 'warn', message }),
    error: (message) => lines.push({ level: 'error', message }),
  };
  return { logger, lines };
}
