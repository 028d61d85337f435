import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ShapeName, TargetName } from './bench-plan.ts';
import { startPinnedServer, type ColdStart, type ManagedProcess } from './bench-process.ts';
import {
  benchClaudeModel,
  benchModel,
  benchResponsesModel,
  benchTenModel,
  scenarioRequestBody,
} from './bench-scenarios.ts';

/**
 * The processes `pnpm bench` measures: the mock upstream, the floor proxy and the gateway's shapes, each started
 * pinned to its CPU with its cold start measured (exec to the first 200 on a chat request). Every shape is its own
 * `node dist/server.js` (or `TORII_BENCH_COMMAND`) with `TORII_WORKERS=1`, in its own temp working directory with an
 * empty data directory.
 */

/** A started target, as the measurements drive it. */
export interface LiveTarget {
  name: TargetName;
  port: number;
  /** The `Authorization` header the load sends: the master key, or for `production` the virtual key. */
  authorization: string;
  managed: ManagedProcess;
  /** Exec to the first chat 200; `null` for production-master (it is production's process). */
  coldStart: ColdStart | null;
}

/** What each shape's process gets besides the common settings; `undefined` removes a variable. */
export function shapeEnvironment(
  shape: ShapeName,
  services: { databaseUrl: string; redisUrl: string } | undefined,
  dataDirectory: string,
): Record<string, string | undefined> {
  const common = {
    TORII_DATA_DIR: dataDirectory,
    DATABASE_URL: undefined,
    REDIS_URL: undefined,
    TORII_DATABASE: undefined,
  };
  switch (shape) {
    case 'embedded':
      // As scripts/start.sh starts it: no DATABASE_URL, no REDIS_URL, the embedded database in an empty data dir.
      return common;
    case 'production':
      if (services === undefined) throw new Error('production needs PostgreSQL and Redis');
      return { ...common, DATABASE_URL: services.databaseUrl, REDIS_URL: services.redisUrl };
    case 'lean':
      return { ...common, TORII_DATABASE: 'off' };
  }
}

/** One line describing a shape's settings, for the log and the JSON. */
export function describeShape(shape: ShapeName): string {
  switch (shape) {
    case 'embedded':
      return 'no DATABASE_URL, no REDIS_URL, empty TORII_DATA_DIR (embedded database, ledger on); master key';
    case 'production':
      return 'DATABASE_URL (bench PostgreSQL) + REDIS_URL (bench Redis), ledger on; virtual key with limits and a budget';
    case 'lean':
      return 'TORII_DATABASE=off (no database, no ledger); master key';
  }
}

/**
 * Writes the gateway config every shape loads: three model groups pointing at the mock (`bench-model` and
 * `bench-responses`, `openai` deployments; `bench-claude`, an `anthropic` one), all with `baseURL` `<mock>/v1`.
 * Returns its path.
 */
export function writeGatewayConfig(temporaryDirectory: string, mockURL: string): string {
  const path = join(temporaryDirectory, 'torii-config.json');
  const deployment = (provider: string, model: string) => ({
    provider,
    model,
    baseURL: `${mockURL}/v1`,
    apiKey: 'sk-bench',
  });
  writeFileSync(
    path,
    JSON.stringify({
      modelGroups: {
        [benchModel]: { deployments: [deployment('openai', benchModel)] },
        // Same dialect: torii passes /v1/messages through to the mock's /v1/messages.
        [benchClaudeModel]: { deployments: [deployment('anthropic', benchClaudeModel)] },
        // Same dialect: the openai preset serves the Responses API natively (the request says `store: false`).
        [benchResponsesModel]: { deployments: [deployment('openai', benchResponsesModel)] },
        // Routing's cost on a healthy group: ten deployments, latency strategy (compare with chat at 32 connections).
        [benchTenModel]: {
          strategy: 'latency',
          deployments: Array.from({ length: 10 }, () => deployment('openai', benchModel)),
        },
      },
    }),
  );
  return path;
}

/**
 * Starts one target pinned to `cpu` and waits for its first chat 200 (`startPinnedServer`); `log` gets a line with
 * its pid and cold start.
 */
export async function startTarget(options: {
  name: TargetName;
  cpu: number;
  command: string[];
  environment: Record<string, string | undefined>;
  workingDirectory: string;
  temporaryDirectory: string;
  port: number;
  authorization: string;
  log: (message: string) => void;
}): Promise<LiveTarget> {
  const { managed, coldStart } = await startPinnedServer({ ...options, chatBody: scenarioRequestBody('chat') });
  options.log(
    `${options.name} up (pid ${managed.pid}, CPU ${options.cpu}): ready after ${coldStart.readySeconds.toFixed(3)} s, ` +
      `first chat 200 after ${coldStart.firstChatSeconds.toFixed(3)} s`,
  );
  return { name: options.name, port: options.port, authorization: options.authorization, managed, coldStart };
}

/**
 * Starts a shape: its own working directory and empty data directory under `temporaryDirectory/<shape>`, the
 * gateway command (`dist/server.js`, or `TORII_BENCH_COMMAND` through `sh -c` from the repository root) with one
 * worker, the master key, the config, and the shape's environment.
 */
export async function startShape(options: {
  shape: ShapeName;
  cpu: number;
  port: number;
  distServer: string;
  override: string | undefined;
  repositoryRoot: string;
  temporaryDirectory: string;
  configPath: string;
  masterKey: string;
  mockURL: string;
  floorScript: string;
  services: { databaseUrl: string; redisUrl: string } | undefined;
  log: (message: string) => void;
}): Promise<LiveTarget> {
  const workingDirectory = join(options.temporaryDirectory, options.shape);
  const dataDirectory = join(workingDirectory, 'data');
  mkdirSync(dataDirectory, { recursive: true });
  return startTarget({
    name: options.shape,
    cpu: options.cpu,
    command:
      options.override === undefined
        ? [process.execPath, options.distServer]
        : ['sh', '-c', `exec ${options.override}`],
    environment: {
      PORT: String(options.port),
      TORII_WORKERS: '1',
      TORII_MASTER_KEY: options.masterKey,
      TORII_CONFIG: options.configPath,
      ...shapeEnvironment(options.shape, options.services, dataDirectory),
      // For stand-ins: `TORII_BENCH_COMMAND='node $BENCH_FLOOR_SCRIPT'` runs the compiled floor as every shape.
      BENCH_UPSTREAM_URL: options.mockURL,
      BENCH_FLOOR_SCRIPT: options.floorScript,
    },
    workingDirectory: options.override === undefined ? workingDirectory : options.repositoryRoot,
    temporaryDirectory: options.temporaryDirectory,
    port: options.port,
    authorization: `Bearer ${options.masterKey}`,
    log: options.log,
  });
}
