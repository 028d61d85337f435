import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import postgres from 'postgres';
import { expect } from 'vitest';
import { Agent, fetch as undiciFetch } from 'undici';
import { mockUpstreamApiKey } from '../mock-upstream/mock-upstream.ts';
import { freePort, nodeReadyLine, spawnGateway, type RunningGateway } from './gateway-process.ts';

/**
 * Shared parts of the accounting e2e tests (keys, limits, budgets, the usage ledger) against the built Node server
 * (`node dist/server.js`) with a real Postgres and Redis.
 */

/** The master key of every accounting gateway. */
export const accountingMasterKey = 'sk-torii-accounting-master-key';

/** What one request to the priced group costs: 10 completion tokens at $10,000 per million, prompt tokens free. */
export const pricedRequestCostUsd = 0.1;

/**
 * The config of the accounting gateways: the `gpt-*` groups but `gpt-tools` and `gpt-json` replay the mock's `text`
 * fixture (19 prompt and 10 completion tokens); `gpt-priced` has a deployment price so each request costs
 * {@link pricedRequestCostUsd}. `claude-*` are Anthropic deployments, `compat-*` an OpenAI-shaped server without the
 * Responses API; the suffix names the fixture case they replay.
 */
export function accountingGatewayConfig(mockUrl: string): Record<string, unknown> {
  const deployment = (model: string, extra: Record<string, unknown> = {}) => ({
    deployments: [{ provider: 'openai', model, baseURL: `${mockUrl}/v1`, apiKey: '${MOCK_UPSTREAM_KEY}', ...extra }],
  });
  const anthropic = (model: string) => ({
    deployments: [{ provider: 'anthropic', model, baseURL: `${mockUrl}/v1`, apiKey: '${MOCK_UPSTREAM_KEY}' }],
  });
  const compatible = (model: string) => ({
    deployments: [{ provider: 'openai-compatible', model, baseURL: `${mockUrl}/v1`, apiKey: '${MOCK_UPSTREAM_KEY}' }],
  });
  return {
    server: { upstreamTimeoutMs: 5_000 },
    modelGroups: {
      'gpt-text': deployment('text'),
      'gpt-other': deployment('text'),
      'gpt-slow': deployment('slow-stream'),
      'gpt-priced': deployment('text', { pricing: { input: 0, output: 10_000 } }),
      'claude-text': anthropic('text'),
      'claude-tools': anthropic('tools'),
      'claude-json': anthropic('json-response'),
      'gpt-tools': deployment('tools'),
      'gpt-json': deployment('json-response'),
      // An OpenAI-shaped server without the Responses API: Responses requests to it are translated to chat.
      'compat-text': compatible('text'),
      'compat-tools': compatible('tools'),
      'compat-json': compatible('json-response'),
    },
  };
}

/** A service URL from the global setup, or a clear failure (never a skip). */
export function requiredServiceUrl(name: 'TORII_TEST_REDIS_URL' | 'TORII_TEST_DATABASE_URL'): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(
      `${name} is not set. Run these tests through vitest (tests/services/global-setup.ts starts the real servers).`,
    );
  }
  return value;
}

/** How to start one accounting gateway. */
export interface AccountingGatewayOptions {
  mockUrl: string;
  databaseUrl: string;
  /** Omit to run without Redis. */
  redisUrl?: string;
  /** TORII_WORKERS (default 2: a cluster of two workers). */
  workers?: number;
  rateLimitMode?: 'leased' | 'strict' | 'local';
  environment?: Record<string, string>;
}

/** Starts `node dist/server.js` with the accounting config and waits until it is ready. */
export async function startAccountingGateway(options: AccountingGatewayOptions): Promise<RunningGateway> {
  const directory = mkdtempSync(join(tmpdir(), 'torii-e2e-accounting-'));
  const configPath = join(directory, 'torii.config.json');
  writeFileSync(configPath, JSON.stringify(accountingGatewayConfig(options.mockUrl)));
  const port = await freePort();
  return await spawnGateway(process.execPath, ['dist/server.js'], {
    env: {
      MOCK_UPSTREAM_KEY: mockUpstreamApiKey,
      TORII_MASTER_KEY: accountingMasterKey,
      TORII_CONFIG: configPath,
      PORT: String(port),
      HOST: '127.0.0.1',
      TORII_WORKERS: String(options.workers ?? 2),
      DATABASE_URL: options.databaseUrl,
      REDIS_URL: options.redisUrl ?? '',
      TORII_RATE_LIMIT_MODE: options.rateLimitMode ?? '',
      ...options.environment,
    },
    port,
    readyTimeoutMs: 30_000,
    readyLine: nodeReadyLine,
  });
}

/** An answer of the admin API. */
export interface AdminAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** Calls the admin API with the master key (or `apiKey`). */
export async function adminCall(
  gateway: RunningGateway,
  method: string,
  path: string,
  body?: unknown,
  apiKey: string = accountingMasterKey,
): Promise<AdminAnswer> {
  const response = await fetch(`${gateway.baseURL}/admin${path}`, {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A key as the admin API shows it right after creation or rotation (with its secret). */
export interface IssuedKey {
  id: string;
  key: string;
  version: number;
  body: Record<string, unknown>;
}

/** Creates a virtual key through the admin API; fails the test on anything but 201. */
export async function createVirtualKey(gateway: RunningGateway, fields: Record<string, unknown>): Promise<IssuedKey> {
  const answer = await adminCall(gateway, 'POST', '/keys', fields);
  if (answer.status !== 201)
    throw new Error(`creating a key answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return {
    id: String(answer.body.id),
    key: String(answer.body.key),
    version: Number(answer.body.version),
    body: answer.body,
  };
}

/** A fetch that opens a new connection for every request, so the cluster spreads requests over its workers. */
export function newConnectionFetch(): typeof fetch {
  return ((input: string | URL | Request, init?: RequestInit) => {
    const dispatcher = new Agent({ connections: 1, pipelining: 0 });
    return undiciFetch(input as string, { ...(init as object), dispatcher }).finally(() => {
      void dispatcher.close();
    });
  }) as unknown as typeof fetch;
}

/** An OpenAI SDK client for a gateway: no retries, and (by default) a new connection per request. */
export function openaiClient(gateway: RunningGateway, apiKey: string, options: { reuseConnections?: boolean } = {}) {
  return new OpenAI({
    baseURL: `${gateway.baseURL}/v1`,
    apiKey,
    maxRetries: 0,
    timeout: 20_000,
    ...(options.reuseConnections === true ? {} : { fetch: newConnectionFetch() }),
  });
}

/** A plain chat completion body for the `gpt-text` group. */
export const chatBody = { model: 'gpt-text', messages: [{ role: 'user' as const, content: 'hello' }] };

/** POSTs a chat completion with `fetch` on a new connection; returns the status, headers and parsed body. */
export async function rawChat(
  gateway: RunningGateway,
  apiKey: string,
  body: Record<string, unknown> = chatBody,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const response = await newConnectionFetch()(`${gateway.baseURL}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

/**
 * Watches gateways, from now on, for the rate limiter's `rate limit store failed` warning (its store failed or answered
 * later than the lease timeout, 1 s), for the tests of strict mode's exactness.
 */
export function watchRateLimitStore(gateways: readonly RunningGateway[]): { failed(): boolean; describe(): string } {
  const count = (gateway: RunningGateway) => gateway.output().split('rate limit store failed').length - 1;
  const before = gateways.map(count);
  const failed = () => gateways.some((gateway, index) => count(gateway) > before[index]!);
  return { failed, describe: () => (failed() ? 'the store failed or was late' : 'the store answered in time') };
}

/**
 * Strict mode admits exactly the limit while its store answers within the lease timeout. On a machine loaded enough
 * that it does not, each instance counts locally for the rest of the window, as documented (fail open, bounded):
 * then at most the limit per instance.
 */
export function expectStrictAdmissions(admitted: number, limit: number, instances: number, storeFailed: boolean): void {
  if (storeFailed) expect(admitted).toBeLessThanOrEqual(instances * limit);
  else expect(admitted).toBe(limit);
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `probe` every `intervalMs` until it returns true; fails after `timeoutMs` with `description`. */
export async function waitFor(
  description: string,
  probe: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}`);
    await sleep(intervalMs);
  }
}

/** The process ids of a process's direct children (the workers of a cluster primary). */
export function childProcessIds(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map(Number);
  } catch {
    return []; // pgrep exits 1 when there are none
  }
}

/**
 * Rows of the usage ledger per client request id (the `x-request-id` the test sent), for every id that starts with
 * `idPrefix`. The ledger's own key is the gateway's request id; the client's is kept beside it.
 */
export async function ledgerRowCounts(databaseUrl: string, idPrefix: string): Promise<Map<string, number>> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql<{ client_request_id: string; rows: number }[]>`
      select client_request_id, count(*)::int as rows from usage_events
      where starts_with(client_request_id, ${idPrefix}) group by client_request_id`;
    return new Map(rows.map((row) => [row.client_request_id, row.rows]));
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Seconds into the current minute; rate-limit windows are aligned to the minute. */
export function secondsIntoMinute(now = Date.now()): number {
  return (now % 60_000) / 1000;
}

/** Waits, if needed, so that at least `seconds` remain before the next minute boundary (a rate-limit window end). */
export async function awayFromWindowEnd(seconds: number): Promise<void> {
  const remaining = 60 - secondsIntoMinute();
  if (remaining < seconds) await sleep(remaining * 1000 + 200);
}
