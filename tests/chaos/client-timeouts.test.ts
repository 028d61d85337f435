import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../e2e/gateway-process.ts';
import { nodeClusterRuntime } from '../e2e/gateway-starters.ts';
import { chaosClient, chaosMasterKey, collectChatStream, isLive } from './chaos-client.ts';
import {
  bodyTrickleClient,
  closedWithin,
  firstStatus,
  giantHeaderClient,
  idleClient,
  keepAliveIdleClient,
  openHostileConnection,
  slowlorisClient,
  type HostileConnection,
} from './hostile-client.ts';

// Defect: `requestTimeout: 0` turned off Node's headers timeout too, so a slowloris, a client that connects and says
// nothing, and a body trickled at 1 byte/s held their connection (and a worker's file descriptor) for good, without
// any key. The bounds here are small so the test is quick; the server must close each such connection within its
// bound (plus Node's checking interval), keep serving everyone else meanwhile, and never cut a response that is
// still flowing, however long it runs.
const headersTimeoutMs = 1_000;
const requestTimeoutMs = 2_000;
const keepAliveTimeoutMs = 1_000;
const maxConnectionsPerWorker = 12;
/** What the closing may take beyond its bound on a busy machine (Node checks every second at most; scheduling). */
const slackMs = 4_000;
/** How long a test waits for a close before calling the connection held for good. */
const closeLimitMs = 30_000;

/**
 * An OpenAI-shaped upstream: a plain request gets a short JSON answer at once; a stream sends one content delta every
 * `intervalMs`, `count` of them.
 */
async function startSlowStreamUpstream(count: number, intervalMs: number): Promise<{ url: string; server: Server }> {
  const chunk = (delta: Record<string, unknown>, finish: string | null, usage?: Record<string, number>) =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-slow',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'slow',
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...(usage === undefined ? {} : { usage }),
    })}\n\n`;
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (data: Buffer) => (body += data.toString()));
    request.once('end', () => {
      const parsed = JSON.parse(body || '{}') as { stream?: boolean };
      if (parsed.stream !== true) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            id: 'chatcmpl-fast',
            object: 'chat.completion',
            created: 0,
            model: 'fast',
            choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
          }),
        );
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(chunk({ role: 'assistant', content: '' }, null));
      let sent = 0;
      const timer = setInterval(() => {
        if (sent < count) {
          response.write(chunk({ content: `w${sent++} ` }, null));
          return;
        }
        clearInterval(timer);
        response.end(
          `${chunk({}, 'stop', { prompt_tokens: 3, completion_tokens: count, total_tokens: count + 3 })}data: [DONE]\n\n`,
        );
      }, intervalMs);
      response.once('close', () => clearInterval(timer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** Keeps sending ordinary requests until stopped; resolves with how many were answered and how many failed. */
function keepServing(client: OpenAI): { stop(): Promise<{ answered: number; failed: number }> } {
  let running = true;
  const counts = { answered: 0, failed: 0 };
  const loop = (async () => {
    while (running) {
      try {
        await client.chat.completions.create({ model: 'fast', messages: [{ role: 'user', content: 'hi' }] });
        counts.answered++;
      } catch {
        counts.failed++;
      }
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return counts;
    },
  };
}

describe('client timeouts on Node (dist/server.js, cluster of 2)', { timeout: 120_000 }, () => {
  let upstream: { url: string; server: Server };
  let gateway: RunningGateway;
  let client: OpenAI;
  const open: HostileConnection[] = [];
  const streamCount = 24;
  const streamIntervalMs = 250;

  beforeAll(async () => {
    upstream = await startSlowStreamUpstream(streamCount, streamIntervalMs);
    const deployment = (model: string) => ({
      deployments: [{ provider: 'openai', model, baseURL: `${upstream.url}/v1`, apiKey: 'sk-slow-upstream' }],
    });
    gateway = await nodeClusterRuntime.start(
      { modelGroups: { fast: deployment('fast'), slow: deployment('slow') } },
      {
        TORII_MASTER_KEY: chaosMasterKey,
        TORII_HEADERS_TIMEOUT_MS: String(headersTimeoutMs),
        TORII_REQUEST_TIMEOUT_MS: String(requestTimeoutMs),
        TORII_KEEP_ALIVE_TIMEOUT_MS: String(keepAliveTimeoutMs),
        TORII_MAX_CONNECTIONS: String(maxConnectionsPerWorker),
      },
    );
    client = chaosClient(gateway, 30_000);
  }, 180_000);

  afterAll(async () => {
    for (const connection of open) connection.destroy();
    await gateway?.stop();
    await new Promise((resolve) => upstream?.server.close(resolve));
  });

  const track = (connection: HostileConnection): HostileConnection => {
    open.push(connection);
    return connection;
  };

  it('closes slowloris clients within the headers timeout, serving others meanwhile', async () => {
    const serving = keepServing(client);
    const slow = [1, 2, 3].map(() => track(slowlorisClient(gateway.baseURL, 200)));
    const closed = await Promise.all(slow.map((connection) => closedWithin(connection, closeLimitMs)));
    const { answered, failed } = await serving.stop();
    for (const connection of closed) {
      expect(connection.afterMs).toBeLessThan(headersTimeoutMs + slackMs);
      expect(firstStatus(connection.received)).toBe(408);
    }
    expect(failed).toBe(0);
    expect(answered).toBeGreaterThan(0);
  });

  it('closes a client that connects and sends nothing within the headers timeout', async () => {
    const idle = [1, 2, 3].map(() => track(idleClient(gateway.baseURL)));
    const closed = await Promise.all(idle.map((connection) => closedWithin(connection, closeLimitMs)));
    for (const connection of closed) expect(connection.afterMs).toBeLessThan(headersTimeoutMs + slackMs);
    expect(await isLive(gateway)).toBe(true);
  });

  it('closes a request body trickled at 1 byte/s within the request timeout, serving others meanwhile', async () => {
    const serving = keepServing(client);
    const trickling = [1, 2].map(() =>
      track(
        bodyTrickleClient(gateway.baseURL, {
          path: '/v1/chat/completions',
          headers: { authorization: `Bearer ${chaosMasterKey}` },
        }),
      ),
    );
    const closed = await Promise.all(trickling.map((connection) => closedWithin(connection, closeLimitMs)));
    const { answered, failed } = await serving.stop();
    for (const connection of closed) expect(connection.afterMs).toBeLessThan(requestTimeoutMs + slackMs);
    expect(failed).toBe(0);
    expect(answered).toBeGreaterThan(0);
  });

  // The model routes answer some requests before their body is read (a wrong key; a declared length over the limit):
  // the reply goes out at once, in the client's envelope, and the connection is not held for the rest of the body.
  it.each([
    { case: 'a wrong key', status: 401, headers: { authorization: 'Bearer sk-not-a-key' }, contentLength: 10_000 },
    {
      case: 'a declared body over the limit',
      status: 413,
      headers: { authorization: `Bearer ${chaosMasterKey}` },
      contentLength: 100 * 1024 * 1024,
    },
  ])('answers $case at once while its body trickles, then closes the connection', async (example) => {
    const closed = await closedWithin(
      track(
        bodyTrickleClient(gateway.baseURL, {
          path: '/v1/chat/completions',
          headers: example.headers,
          contentLength: example.contentLength,
          intervalMs: 100,
        }),
      ),
      closeLimitMs,
    );
    expect(firstStatus(closed.received)).toBe(example.status);
    expect(closed.received).toMatch(/\r\n\r\n\{"error":\{"message":/);
    expect(closed.afterMs).toBeLessThan(requestTimeoutMs + slackMs);
    expect(await isLive(gateway)).toBe(true);
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const connection = track(keepAliveIdleClient(gateway.baseURL));
    const closed = await closedWithin(connection, closeLimitMs);
    expect(firstStatus(closed.received)).toBe(200);
    // Node adds a one-second buffer to the keep-alive timeout.
    expect(closed.afterMs).toBeLessThan(keepAliveTimeoutMs + 1_000 + slackMs);
  });

  it('answers a 20 KB header with a clean 431', async () => {
    const closed = await closedWithin(track(giantHeaderClient(gateway.baseURL, 20 * 1024)), closeLimitMs);
    expect(firstStatus(closed.received)).toBe(431);
    expect(await isLive(gateway)).toBe(true);
  });

  it('does not cut a streamed response that keeps flowing past every timeout', async () => {
    const started = performance.now();
    const stream = await client.chat.completions.create({
      model: 'slow',
      stream: true,
      messages: [{ role: 'user', content: 'Count slowly' }],
    });
    const result = await collectChatStream(stream);
    const elapsedMs = performance.now() - started;
    expect(result.error).toBeUndefined();
    expect(result.finishReasons).toEqual(['stop']);
    expect(result.text).toBe(Array.from({ length: streamCount }, (_, index) => `w${index} `).join(''));
    expect(elapsedMs).toBeGreaterThan(headersTimeoutMs + requestTimeoutMs + keepAliveTimeoutMs);
  });

  it('caps the connections a worker holds, and serves again once they are gone', async () => {
    // Two workers share the port: at most 2 x 12 connections are kept; the rest are closed at once, before the
    // headers timeout could answer them with a 408.
    const flood = Array.from({ length: 40 }, () => track(idleClient(gateway.baseURL)));
    const closed = await Promise.all(flood.map((connection) => closedWithin(connection, closeLimitMs)));
    const refused = closed.filter((connection) => connection.received === '');
    const kept = closed.filter((connection) => firstStatus(connection.received) === 408);
    expect(kept.length).toBeLessThanOrEqual(2 * maxConnectionsPerWorker);
    expect(refused.length).toBeGreaterThanOrEqual(40 - 2 * maxConnectionsPerWorker);
    const answer = await client.chat.completions.create({ model: 'fast', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0]?.finish_reason).toBe('stop');
  });

  it('a connection that sends a complete request quickly is never touched by the timeouts', async () => {
    const connection = track(
      openHostileConnection(gateway.baseURL, (socket) => {
        socket.write('GET /health/live HTTP/1.1\r\nHost: torii\r\nConnection: close\r\n\r\n');
        return () => {};
      }),
    );
    const closed = await closedWithin(connection, closeLimitMs);
    expect(firstStatus(closed.received)).toBe(200);
  });
});
