/**
 * The soak: mixed streaming and JSON traffic through a cluster of two workers for a while (10 minutes by default),
 * with bursts, stalled and broken upstreams and clients that leave mid-stream, against the built server with a real
 * PostgreSQL ledger. It ends by checking that every worker is the one it started with, that their memory stayed flat,
 * and that the ledger holds exactly one row per successful request.
 *
 *   pnpm build && node tests/soak/run-soak.ts            # 10 minutes
 *   node tests/soak/run-soak.ts --minutes 1              # shorter
 *
 * Prints RSS per worker every 30 s and a JSON summary at the end; exits 1 when a check fails.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { childProcessIds, waitFor } from '../e2e/accounting-harness.ts';
import { nodeClusterRuntime } from '../e2e/gateway-starters.ts';
import { startTestPostgres } from '../services/postgres-server.ts';
import { chaosMasterKey } from '../chaos/chaos-client.ts';
import {
  burstText,
  hostileEnvironment,
  hostileGatewayConfig,
  startHostileUpstream,
} from '../chaos/hostile-upstream.ts';

const { values } = parseArgs({
  options: { minutes: { type: 'string', default: '10' }, concurrency: { type: 'string', default: '24' } },
});
const durationMs = Number(values.minutes) * 60_000;
const concurrency = Number(values.concurrency);

/** What each loop sends, in turn: the model group, whether to stream, and what counts as success. */
interface Shape {
  model: string;
  stream: boolean;
  /** Abort the stream after the first chunk (a client that leaves). */
  leave?: boolean;
  /** The text a successful answer must carry whole (bursts). */
  text?: string;
  /** Expected to fail (stalled or broken upstreams): success is not counted, a clean failure is. */
  failing?: boolean;
}

const shapes: Shape[] = [
  { model: 'openai/text', stream: false },
  { model: 'anthropic/text', stream: false },
  { model: 'openai/text', stream: true },
  { model: 'anthropic/text', stream: true },
  { model: 'openai/burst:3000', stream: true, text: burstText(3_000) },
  { model: 'anthropic/burst:3000', stream: true, text: burstText(3_000) },
  { model: 'openai/text', stream: false },
  { model: 'openai/stall-body', stream: true, failing: true },
  { model: 'anthropic/stall-body', stream: false, failing: true },
  { model: 'openai/disconnect:40', stream: true, failing: true },
  { model: 'openai/burst:3000', stream: true, leave: true },
  { model: 'anthropic/text', stream: false },
];

interface Outcome {
  clientRequestId: string;
  model: string;
  succeeded: boolean;
  failedCleanly: boolean;
  /** The client left on purpose (neither a success nor a failure). */
  left: boolean;
  /** The upstream behind it stalls or breaks: it must fail cleanly, never succeed. */
  expectedToFail: boolean;
}

function rssMegabytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return Number.NaN;
  }
}

async function sendOne(baseURL: string, shape: Shape, clientRequestId: string): Promise<Outcome> {
  const outcome: Outcome = {
    clientRequestId,
    model: shape.model,
    succeeded: false,
    failedCleanly: false,
    left: false,
    expectedToFail: shape.failing === true,
  };
  const controller = new AbortController();
  try {
    const response = await fetch(`${baseURL}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${chaosMasterKey}`,
        'content-type': 'application/json',
        'x-request-id': clientRequestId,
      },
      body: JSON.stringify({ model: shape.model, stream: shape.stream, messages: [{ role: 'user', content: 'soak' }] }),
      signal: AbortSignal.any([controller.signal, AbortSignal.timeout(60_000)]),
    });
    if (!shape.stream) {
      const body = (await response.json()) as { choices?: unknown[]; error?: unknown };
      outcome.succeeded = response.status === 200 && Array.isArray(body.choices);
      outcome.failedCleanly = response.status >= 500 && body.error !== undefined;
      return outcome;
    }
    if (response.status !== 200) {
      outcome.failedCleanly = response.status >= 500;
      await response.body?.cancel();
      return outcome;
    }
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (shape.leave === true) {
        outcome.left = true;
        controller.abort();
        return outcome;
      }
    }
    const events = text.split('\n\n').filter((event) => event.startsWith('data: '));
    const last = events.at(-1);
    if (last === 'data: [DONE]') {
      if (shape.text !== undefined) {
        let content = '';
        for (const event of events.slice(0, -1)) {
          const chunk = JSON.parse(event.slice(6)) as { choices: { delta: { content?: string } }[] };
          for (const choice of chunk.choices) content += choice.delta.content ?? '';
        }
        outcome.succeeded = content === shape.text;
      } else outcome.succeeded = true;
    } else outcome.failedCleanly = last?.startsWith('data: {"error"') === true;
    return outcome;
  } catch (error) {
    if (shape.leave === true && controller.signal.aborted) return outcome;
    throw error;
  }
}

async function main(): Promise<void> {
  const database = await startTestPostgres();
  const upstream = await startHostileUpstream();
  const config = hostileGatewayConfig(upstream.url, ['text', 'burst:3000', 'stall-body', 'disconnect:40'], {
    upstreamTimeoutMs: 5_000,
    upstreamBodyTimeoutMs: 2_000,
    upstreamStreamIdleTimeoutMs: 2_000,
  });
  const gateway = await nodeClusterRuntime.start(config, {
    ...hostileEnvironment,
    TORII_MASTER_KEY: chaosMasterKey,
    DATABASE_URL: database.url,
    TORII_WORKERS: '2',
  });
  const primary = gateway.pid as number;
  const workers = childProcessIds(primary);
  const outcomes: Outcome[] = [];
  const unexpected: string[] = [];
  const samples: { minute: number; rss: number[] }[] = [];
  const startedAt = Date.now();
  const sampler = setInterval(() => {
    const sample = { minute: (Date.now() - startedAt) / 60_000, rss: workers.map(rssMegabytes) };
    samples.push(sample);
    console.log(
      `${sample.minute.toFixed(1)} min: ${outcomes.length} requests, worker RSS ${sample.rss.map((value) => value.toFixed(0)).join(' / ')} MB`,
    );
  }, 30_000);
  let next = 0;
  const loop = async (): Promise<void> => {
    while (Date.now() - startedAt < durationMs) {
      const index = next++;
      const shape = shapes[index % shapes.length] as Shape;
      try {
        outcomes.push(await sendOne(gateway.baseURL, shape, `soak-${index}`));
      } catch (error) {
        unexpected.push(`${shape.model}: ${String(error)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  clearInterval(sampler);
  const alive = workers.filter((pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  });
  const succeeded = outcomes.filter((outcome) => outcome.succeeded);
  const succeededWrongly = succeeded.filter((outcome) => outcome.expectedToFail).length;
  const sql = postgres(database.url, { max: 1, onnotice: () => {} });
  const rowsOf = async () =>
    new Map(
      (
        await sql<{ client_request_id: string; rows: number }[]>`select client_request_id, count(*)::int as rows
          from usage_events where starts_with(client_request_id, 'soak-') group by client_request_id`
      ).map((row) => [row.client_request_id, row.rows]),
    );
  await waitFor(
    'every successful request in the ledger',
    async () => {
      const rows = await rowsOf();
      return succeeded.every((outcome) => rows.has(outcome.clientRequestId));
    },
    60_000,
    500,
  ).catch(() => undefined);
  const rows = await rowsOf();
  await sql.end({ timeout: 5 });
  const missing = succeeded.filter((outcome) => !rows.has(outcome.clientRequestId)).length;
  const duplicated = [...rows.values()].filter((count) => count !== 1).length;
  const warm = samples.filter((sample) => sample.minute >= 1);
  const first = warm[0]?.rss ?? samples[0]?.rss ?? [];
  const last = samples.at(-1)?.rss ?? [];
  const failedUnexpectedly = outcomes.filter(
    (outcome) => !outcome.succeeded && !outcome.failedCleanly && !outcome.left,
  );
  const summary = {
    minutes: Number(values.minutes),
    requests: outcomes.length,
    succeeded: succeeded.length,
    failedCleanly: outcomes.filter((outcome) => outcome.failedCleanly).length,
    failedUnexpectedly: failedUnexpectedly.length,
    succeededThoughTheUpstreamFailed: succeededWrongly,
    unexpectedErrors: unexpected.length,
    workersAtStart: workers,
    workersAliveAtEnd: alive,
    rssMegabytesAfterOneMinute: first.map((value) => Math.round(value)),
    rssMegabytesAtEnd: last.map((value) => Math.round(value)),
    rssMegabytesMax: workers.map((_, index) =>
      Math.round(Math.max(...samples.map((sample) => sample.rss[index] ?? 0))),
    ),
    ledgerRows: rows.size,
    successfulWithoutRow: missing,
    duplicatedRows: duplicated,
  };
  console.log(JSON.stringify(summary, null, 2));
  if (unexpected.length > 0) console.log(unexpected.slice(0, 10).join('\n'));
  await gateway.stop();
  await upstream.close();
  await database.stop();
  const ok =
    alive.length === workers.length &&
    workers.length === 2 &&
    missing === 0 &&
    duplicated === 0 &&
    failedUnexpectedly.length === 0 &&
    succeededWrongly === 0 &&
    unexpected.length === 0;
  process.exit(ok ? 0 : 1);
}

await main();
