import type { GatewayLogger } from '../../src/services.ts';

/** What a server's start-up line says. */
export interface GatewayAnnouncement {
  /** Where it listens, as a client would call it (`http://localhost:8787`). */
  url: string;
  /** The config's source (a file, or the embedded defaults) and its model groups. */
  configSource: string;
  modelGroups: string[];
  /** A master key generated for this run: shown in this line only. */
  generatedMasterKey?: string | undefined;
  /** Anything else the runtime reports (runtime, workers, database, shared cache, rate-limit mode). */
  fields: Record<string, unknown>;
}

/** The URL a client calls for a server listening on `hostname` (a wildcard address is reached as localhost). */
export function listeningUrl(hostname: string | undefined, port: number): string {
  const host =
    hostname === undefined || hostname === '' || hostname === '0.0.0.0' || hostname === '::' ? 'localhost' : hostname;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Logs the start-up line `torii listening on <url>`: at `info`, or at `warn` when it carries a generated master key
 * (the only place that key is shown, and it wants replacing with TORII_MASTER_KEY). Warns as well when the config has
 * no model groups, naming how to get some.
 *
 * @example
 * announceGateway(logger, { url: listeningUrl('0.0.0.0', 8787), configSource, modelGroups, fields: { runtime: 'bun' } });
 */
export function announceGateway(logger: GatewayLogger, announcement: GatewayAnnouncement): void {
  const { url, generatedMasterKey } = announcement;
  const fields = { ...announcement.fields, config: announcement.configSource, modelGroups: announcement.modelGroups };
  if (generatedMasterKey === undefined) logger.info(`torii listening on ${url}`, fields);
  else
    logger.warn(`torii listening on ${url}`, {
      ...fields,
      masterKey: generatedMasterKey,
      note: 'generated for this run; set TORII_MASTER_KEY to choose one',
    });
  if (announcement.modelGroups.length === 0)
    logger.warn(
      'no model groups: set TORII_CONFIG to a config file, or a provider key such as OPENAI_API_KEY or ANTHROPIC_API_KEY',
    );
}
