import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';

/**
 * Time to first byte at concurrency 1, which wrk cannot measure: sequential requests over one keep-alive connection
 * (`node:http`), each timed from the write of the request (headers and body, sent together by `end()`) to the first
 * byte of the response body, and to its end. Run as a process pinned to the load CPU by the bench
 * (`bench-measure.ts`), it prints one `FIRST_BYTE_RESULT {json}` line.
 *
 * Paired with a base (`BENCH_BASE_URL`, the floor): every step sends one request to the target and one to the base,
 * each over its own keep-alive connection, in alternating order, and the result adds the base's times and the
 * per-step differences (target minus base). The two requests of a step run a millisecond apart, so the machine's
 * speed, which drifts by more than the gateway's cost within seconds, is the same for both.
 *
 * Environment: `BENCH_URL` (the full URL), `BENCH_BODY_FILE`, `BENCH_AUTHORIZATION` (optional), `BENCH_BASE_URL` and
 * `BENCH_BASE_AUTHORIZATION` (optional), `BENCH_REQUESTS` (measured steps, default 2,000), `BENCH_WARM_UP_REQUESTS`
 * (sent first, not measured, default 200), `BENCH_MAX_SECONDS` (the measured steps stop after this long even if fewer
 * were sent, default: no limit).
 */

/** What one run measured: latencies in milliseconds. */
export interface FirstByteResult {
  requests: number;
  errors: number;
  seconds: number;
  firstByteMs: { p50: number; p99: number; mean: number };
  totalMs: { p50: number; p99: number; mean: number };
  /** Paired runs only: the base's times to the first byte, and the per-step differences (target minus base). */
  paired?: {
    baseFirstByteMs: { p50: number; p99: number; mean: number };
    firstByteDifferenceMs: { p50: number; p99: number; mean: number };
  };
}

/** The `q` quantile (0-1) of `values` by the nearest-rank method; 0 for an empty list. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((left, right) => left - right);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1]!;
}

/** p50, p99 and mean of `values`. */
export function summarize(values: readonly number[]): { p50: number; p99: number; mean: number } {
  const mean = values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
  return { p50: percentile(values, 0.5), p99: percentile(values, 0.99), mean };
}

/** Parses the `FIRST_BYTE_RESULT {json}` line of the client's output. */
export function parseFirstByteOutput(stdout: string): FirstByteResult {
  const line = stdout.split('\n').find((candidate) => candidate.startsWith('FIRST_BYTE_RESULT '));
  if (line === undefined) throw new Error(`the first-byte client printed no result:\n${stdout.slice(-1_500)}`);
  return JSON.parse(line.slice('FIRST_BYTE_RESULT '.length)) as FirstByteResult;
}

/** One request; resolves with the times to the first body byte and to the end, in ms, and the status. */
function timedRequest(
  agent: Agent,
  url: URL,
  body: Buffer,
  authorization: string,
): Promise<{ status: number; firstByteMs: number; totalMs: number }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {
      'content-type': 'application/json',
      'content-length': body.length,
    };
    if (authorization !== '') headers.authorization = authorization;
    const outgoing = request({
      agent,
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      headers,
    });
    let sentAt = 0;
    let firstByteAt = 0;
    outgoing.on('response', (response) => {
      response.on('data', () => {
        if (firstByteAt === 0) firstByteAt = performance.now();
      });
      response.on('end', () => {
        const endAt = performance.now();
        resolve({
          status: response.statusCode ?? 0,
          firstByteMs: (firstByteAt === 0 ? endAt : firstByteAt) - sentAt,
          totalMs: endAt - sentAt,
        });
      });
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    sentAt = performance.now();
    outgoing.end(body);
  });
}

/** One request that failed (a socket error), timed as nothing. */
const failed = { status: 0, firstByteMs: 0, totalMs: 0 };

/**
 * Sends `warmUp` then `requests` sequential requests over one keep-alive connection and measures the measured ones;
 * with `baseUrl`, each step also sends one to the base (see the file's comment) and the result has `paired`.
 *
 * @example
 * const result = await measureFirstByte({ url: 'http://127.0.0.1:4100/v1/chat/completions', body, requests: 2_000 });
 */
export async function measureFirstByte(options: {
  url: string;
  body: Buffer;
  authorization?: string;
  /** The base measured beside the target, step by step (the floor). */
  baseUrl?: string;
  baseAuthorization?: string;
  requests: number;
  warmUp?: number;
  /** Stop measuring after this many seconds even if fewer than `requests` were sent. */
  maxSeconds?: number;
}): Promise<FirstByteResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const baseAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const url = new URL(options.url);
  const baseUrl = options.baseUrl === undefined ? undefined : new URL(options.baseUrl);
  const send = (to: 'target' | 'base') =>
    timedRequest(
      to === 'target' ? agent : baseAgent,
      to === 'target' ? url : baseUrl!,
      options.body,
      (to === 'target' ? options.authorization : options.baseAuthorization) ?? '',
    ).catch(() => failed);
  const firstByte: number[] = [];
  const total: number[] = [];
  const baseFirstByte: number[] = [];
  const differences: number[] = [];
  let errors = 0;
  const warmUp = options.warmUp ?? 200;
  let startedAt = performance.now();
  for (let index = 0; index < warmUp + options.requests; index++) {
    if (index === warmUp) startedAt = performance.now();
    if (
      index > warmUp &&
      options.maxSeconds !== undefined &&
      performance.now() - startedAt > options.maxSeconds * 1_000
    )
      break;
    // The target first on even steps, the base first on odd ones: neither always follows the other.
    const targetFirst = index % 2 === 0;
    const first = baseUrl === undefined || targetFirst ? await send('target') : await send('base');
    const second = baseUrl === undefined ? undefined : targetFirst ? await send('base') : await send('target');
    const timing = baseUrl === undefined || targetFirst ? first : second!;
    const base = baseUrl === undefined ? undefined : targetFirst ? second! : first;
    if (index < warmUp) continue;
    if (timing.status !== 200 || (base !== undefined && base.status !== 200)) {
      errors++;
      continue;
    }
    firstByte.push(timing.firstByteMs);
    total.push(timing.totalMs);
    if (base !== undefined) {
      baseFirstByte.push(base.firstByteMs);
      differences.push(timing.firstByteMs - base.firstByteMs);
    }
  }
  const seconds = (performance.now() - startedAt) / 1_000;
  agent.destroy();
  baseAgent.destroy();
  return {
    requests: firstByte.length,
    errors,
    seconds,
    firstByteMs: summarize(firstByte),
    totalMs: summarize(total),
    ...(baseUrl === undefined
      ? {}
      : { paired: { baseFirstByteMs: summarize(baseFirstByte), firstByteDifferenceMs: summarize(differences) } }),
  };
}

if (import.meta.main) {
  const url = process.env.BENCH_URL;
  const bodyFile = process.env.BENCH_BODY_FILE;
  if (url === undefined || bodyFile === undefined) {
    process.stderr.write('bench first byte: set BENCH_URL and BENCH_BODY_FILE\n');
    process.exit(2);
  }
  const result = await measureFirstByte({
    url,
    body: readFileSync(bodyFile),
    authorization: process.env.BENCH_AUTHORIZATION ?? '',
    ...(process.env.BENCH_BASE_URL
      ? { baseUrl: process.env.BENCH_BASE_URL, baseAuthorization: process.env.BENCH_BASE_AUTHORIZATION ?? '' }
      : {}),
    requests: Number(process.env.BENCH_REQUESTS ?? 2_000),
    warmUp: Number(process.env.BENCH_WARM_UP_REQUESTS ?? 200),
    ...(process.env.BENCH_MAX_SECONDS ? { maxSeconds: Number(process.env.BENCH_MAX_SECONDS) } : {}),
  });
  process.stdout.write(`FIRST_BYTE_RESULT ${JSON.stringify(result)}\n`);
}
