import { createServer, type AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../e2e/gateway-process.ts';
import { gatewayRuntimes } from '../e2e/gateway-starters.ts';
import { startMockUpstream, mockUpstreamApiKey, type MockUpstream } from '../mock-upstream/mock-upstream.ts';
import { chaosClient, chaosMasterKey, collectChatStream } from './chaos-client.ts';
import { hostileEnvironment, startHostileUpstream, type HostileUpstream } from './hostile-upstream.ts';

/** A deployment of the hostile upstream whose model name is the behaviour it plays. */
function deployment(upstream: HostileUpstream, behaviour: string, provider = 'openai', extra: object = {}) {
  return { provider, model: behaviour, baseURL: `${upstream.url}/v1`, apiKey: '${HOSTILE_KEY}', ...extra };
}

/** A loopback port nothing listens on (connections to it are refused at once). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Timeouts short enough that a stalled deployment is given up on within the tests' patience. */
const stallTimeouts = { timeouts: { headersMs: 1000, streamIdleMs: 1000 } };

function routingConfig(upstream: HostileUpstream, mock: MockUpstream, refusedPort: number): Record<string, unknown> {
  // A deployment whose port refuses connections, in front of the recording mock (embeddings, the Responses API).
  const refused = {
    provider: 'openai',
    model: 'text',
    baseURL: `http://127.0.0.1:${refusedPort}/v1`,
    apiKey: '${MOCK_KEY}',
  };
  const recorded = { provider: 'openai', model: 'text', baseURL: `${mock.url}/v1`, apiKey: '${MOCK_KEY}', priority: 1 };
  return {
    routing: { retry: { backoffMs: 10, maxBackoffMs: 50 } },
    modelGroups: {
      // The case: one failing and one healthy deployment, weights 1:1.
      'half-broken': { deployments: [deployment(upstream, 'error:500'), deployment(upstream, 'text')] },
      resets: { deployments: [deployment(upstream, 'reset'), deployment(upstream, 'text:resets')] },
      'stalls-first': {
        deployments: [
          deployment(upstream, 'stall-headers', 'openai', stallTimeouts),
          deployment(upstream, 'text:stalls'),
        ],
      },
      'html-in-200': { deployments: [deployment(upstream, 'html'), deployment(upstream, 'text:html')] },
      'client-error': { deployments: [deployment(upstream, 'error:400'), deployment(upstream, 'error:400:second')] },
      // Falls back across providers: an Anthropic deployment that is overloaded, then an OpenAI-compatible group.
      primary: {
        deployments: [deployment(upstream, 'error:529', 'anthropic')],
        retry: { retries: 0 },
        fallbacks: ['backup'],
      },
      backup: { deployments: [deployment(upstream, 'text:backup')] },
      'all-down': {
        deployments: [deployment(upstream, 'error:503:all-down')],
        retry: { retries: 0 },
        cooldown: { failures: 2, cooldownMs: 60_000 },
      },
      // A whole-call bound: the JSON answer stalls mid-body (retried elsewhere); a stream stalls after its first bytes
      // (already the client's: it ends with a timeout event).
      'total-time': {
        deployments: [
          deployment(upstream, 'stall-body', 'openai', {
            timeouts: { bodyMs: 30_000, streamIdleMs: 30_000, totalMs: 800 },
          }),
          deployment(upstream, 'text:total-time', 'openai', { priority: 1 }),
        ],
        strategy: 'priority',
      },
      'total-time-stream': {
        deployments: [
          deployment(upstream, 'stall-body', 'openai', { timeouts: { streamIdleMs: 30_000, totalMs: 800 } }),
        ],
      },
      'apis-failover': { strategy: 'priority', deployments: [refused, recorded] },
      // A minute's cooldown that a background health check (the model list answers) ends early.
      'health-checked': {
        strategy: 'priority',
        deployments: [
          deployment(upstream, 'error:500:health'),
          deployment(upstream, 'text:health', 'openai', { priority: 1 }),
        ],
        retry: { retries: 1 },
        cooldown: { failures: 1, cooldownMs: 60_000 },
        healthCheck: { intervalMs: 200, timeoutMs: 2000 },
      },
      recovers: {
        deployments: [deployment(upstream, 'flaky:4')],
        retry: { retries: 0 },
        cooldown: { failures: 2, cooldownMs: 300 },
      },
    },
  };
}

/** A streamed chat through the openai SDK, read to its end (or its error). */
async function streamChat(client: OpenAI, model: string) {
  return await collectChatStream(
    await client.chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
  );
}

async function chat(gateway: RunningGateway, model: string, stream = false) {
  return await fetch(`${gateway.baseURL}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${chaosMasterKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'Hello' }] }),
    signal: AbortSignal.timeout(60_000),
  });
}

// Routing around failing deployments (the routing issue), on every runtime, driven by the real SDKs: retries go to
// the other deployment, a failing deployment is cooled after a few failures, fallbacks cross providers, a stream that
// fails before its first byte is retried, and client errors are never retried.
describe.each(gatewayRuntimes)('routing around failing deployments on $name', (runtime) => {
  let upstream: HostileUpstream;
  let mock: MockUpstream;
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    upstream = await startHostileUpstream();
    mock = await startMockUpstream();
    gateway = await runtime.start(routingConfig(upstream, mock, await closedPort()), {
      ...hostileEnvironment,
      MOCK_KEY: mockUpstreamApiKey,
      TORII_MASTER_KEY: chaosMasterKey,
    });
    client = chaosClient(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
    await mock?.close();
  });

  it('retries embeddings and the Responses API (streamed and not) on another deployment too', async () => {
    const { data: embeddings, response } = await client.embeddings
      .create({ model: 'apis-failover', input: ['a', 'b'] })
      .withResponse();
    expect(embeddings.data).toHaveLength(2);
    expect(response.headers.get('x-torii-attempts')).toBe('2');
    const created = await client.responses.create({ model: 'apis-failover', input: 'Hello', store: false });
    expect(created.output_text.length).toBeGreaterThan(0);
    const streamed = await client.responses.create({
      model: 'apis-failover',
      input: 'Hello',
      store: false,
      stream: true,
    });
    let completed = false;
    for await (const event of streamed) if (event.type === 'response.completed') completed = true;
    expect(completed).toBe(true);
  });

  it('one failing and one healthy deployment (1:1): no client errors, and the failing one is cooled', async () => {
    const answers = [];
    for (let index = 0; index < 40; index++) {
      const { data, response } = await client.chat.completions
        .create({ model: 'half-broken', messages: [{ role: 'user', content: 'Hi' }] })
        .withResponse();
      answers.push({ text: data.choices[0]?.message.content, deployment: response.headers.get('x-torii-deployment') });
    }
    expect(answers.every((answer) => typeof answer.text === 'string' && answer.deployment === 'half-broken/1')).toBe(
      true,
    );
    // Each process cools the failing deployment after its 5th failure (default cooldown: 5 failures a minute); the
    // Node cluster has two workers, workerd and Deno one isolate or process.
    expect(upstream.requests.get('error:500')).toBeLessThanOrEqual(10);
    const admin = await fetch(`${gateway.baseURL}/admin/deployments`, {
      headers: { authorization: `Bearer ${chaosMasterKey}` },
    });
    const { data } = (await admin.json()) as { data: { id: string; state: string; failures: number }[] };
    expect(data.find((deployment) => deployment.id === 'half-broken/0')).toMatchObject({ state: 'cooling_down' });
    expect(data.find((deployment) => deployment.id === 'half-broken/1')).toMatchObject({
      state: 'healthy',
      failures: 0,
    });
    const refused = await fetch(`${gateway.baseURL}/admin/deployments`, { headers: { authorization: 'Bearer nope' } });
    expect(refused.status).toBe(401);
    if (runtime.name.startsWith('Node')) {
      const metrics = await (await fetch(`${gateway.baseURL}/metrics`)).text();
      expect(metrics).toMatch(
        /torii_upstream_attempts_total\{[^}]*deployment="half-broken\/0"[^}]*outcome="failure"[^}]*\} [1-9]/,
      );
      expect(metrics).toMatch(/torii_retries_total\{model_group="half-broken"\} [1-9]/);
      expect(metrics).toMatch(/torii_deployment_circuit_open\{deployment="half-broken\/0"\} [12]/);
    }
  });

  it('a connection reset, an HTML page in a 200, and a stream that stalls before its first byte go to the other deployment', async () => {
    for (let index = 0; index < 6; index++) {
      const reset = await client.chat.completions.create({
        model: 'resets',
        messages: [{ role: 'user', content: 'Hi' }],
      });
      expect(reset.choices[0]?.message.content).toBeTypeOf('string');
      const html = await client.chat.completions.create({
        model: 'html-in-200',
        messages: [{ role: 'user', content: 'Hi' }],
      });
      expect(html.choices[0]?.message.content).toBeTypeOf('string');
      const stream = await streamChat(client, 'stalls-first');
      expect(stream.error).toBeUndefined();
      expect(stream.finishReasons).toEqual(['stop']);
    }
  });

  it('never retries a client error (upstream 400): one attempt, its error in the envelope', async () => {
    const before = (upstream.requests.get('error:400') ?? 0) + (upstream.requests.get('error:400:second') ?? 0);
    const response = await chat(gateway, 'client-error');
    expect(response.status).toBe(400);
    expect(response.headers.get('x-torii-attempts')).toBe('1');
    const after = (upstream.requests.get('error:400') ?? 0) + (upstream.requests.get('error:400:second') ?? 0);
    expect(after - before).toBe(1);
  });

  it('falls back across providers, for OpenAI and Anthropic clients, and says so in the headers', async () => {
    const { response } = await client.chat.completions
      .create({ model: 'primary', messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse();
    expect(response.headers.get('x-torii-model-group')).toBe('backup');
    expect(response.headers.get('x-torii-deployment')).toBe('backup/0');
    expect(response.headers.get('x-torii-attempts')).toBe('2');
    const anthropic = new Anthropic({ baseURL: gateway.baseURL, apiKey: chaosMasterKey, maxRetries: 0 });
    const { data: message, response: messageResponse } = await anthropic.messages
      .create({ model: 'primary', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse();
    expect(message.type).toBe('message');
    expect(messageResponse.headers.get('x-torii-model-group')).toBe('backup');
    // A streamed Messages request: the overloaded Anthropic deployment fails before its first byte, so the fallback's
    // stream (translated to Anthropic events) is the client's whole stream.
    const messageStream = anthropic.messages.stream({
      model: 'primary',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    const final = await messageStream.finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text' });
    expect(final.stop_reason).toBe('end_turn');
    const streamed = await streamChat(client, 'primary');
    expect(streamed.error).toBeUndefined();
  });

  it('a group whose deployments are all cooling down fails fast with a 503 and a retry-after, in each envelope', async () => {
    // Two failures cool the one deployment for a minute, in each process that saw them: requests go on until six in a
    // row were refused without reaching the upstream (both workers of the Node cluster cooled it by then).
    let refusedInARow = 0;
    let refused: Response | undefined;
    for (let index = 0; index < 100 && refusedInARow < 6; index++) {
      const response = await chat(gateway, 'all-down');
      if (response.status === 503) {
        refusedInARow++;
        refused = response;
      } else {
        refusedInARow = 0;
        await response.text();
      }
    }
    expect(refusedInARow).toBe(6);
    const openai = (await refused!.json()) as { error: { code: string } };
    expect(openai.error.code).toBe('no_healthy_deployment');
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
    const before = upstream.requests.get('error:503:all-down');
    const anthropicAnswer = await fetch(`${gateway.baseURL}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': chaosMasterKey, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'all-down', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    const anthropicBody = (await anthropicAnswer.json()) as { type: string; error: { type: string } };
    expect(anthropicAnswer.status).toBe(529);
    expect(anthropicBody).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
    expect(upstream.requests.get('error:503:all-down')).toBe(before);
  });

  it("a deployment's total time bounds its whole call: a stalled answer is retried, a stalled stream ends with a timeout event", async () => {
    const answer = await chat(gateway, 'total-time');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-torii-deployment')).toBe('total-time/1');
    expect(answer.headers.get('x-torii-attempts')).toBe('2');
    const stream = await streamChat(client, 'total-time-stream');
    expect(stream.error).toBeInstanceOf(OpenAI.APIError);
    expect(String((stream.error as Error).message)).toMatch(/total time/);
  });

  it.runIf(runtime.name.startsWith('Node'))(
    "Node: a deployment's connect timeout bounds its TLS handshake, and the request moves on",
    async () => {
      // Accepts TCP connections and never says a word: a TLS handshake to it can only time out.
      const silent = createServer(() => {});
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const port = (silent.address() as AddressInfo).port;
      const silentDeployment = {
        provider: 'openai',
        model: 'text',
        baseURL: `https://127.0.0.1:${port}/v1`,
        apiKey: '${HOSTILE_KEY}',
        timeouts: { connectMs: 300, headersMs: 60_000 },
      };
      const blackhole = await runtime.start(
        {
          modelGroups: {
            silent: { retry: { retries: 0 }, deployments: [silentDeployment], fallbacks: ['healthy'] },
            'silent-alone': { retry: { retries: 0 }, deployments: [silentDeployment] },
            healthy: { deployments: [deployment(upstream, 'text:connect')] },
          },
        },
        { ...hostileEnvironment, TORII_MASTER_KEY: chaosMasterKey },
      );
      try {
        const response = await chat(blackhole, 'silent');
        await response.text();
        expect(response.status).toBe(200);
        expect(response.headers.get('x-torii-model-group')).toBe('healthy');
        // Alone, its failure is the answer: the connect timeout it names is the deployment's, not the default 10 s.
        const alone = await chat(blackhole, 'silent-alone');
        const body = (await alone.json()) as { error: { code: string; message: string } };
        expect(alone.status).toBe(502);
        expect(body.error.code).toBe('upstream_unreachable');
        expect(body.error.message).toMatch(/timeout: 300 ?ms/);
      } finally {
        await blackhole.stop();
        silent.close();
      }
    },
  );

  it.runIf(!runtime.name.startsWith('Cloudflare'))(
    'optional background health checks bring a cooled deployment back before its cooldown ends',
    async () => {
      const failed = await chat(gateway, 'health-checked');
      await failed.text();
      expect(failed.headers.get('x-torii-deployment')).toBe('health-checked/1');
      let state = 'cooling_down';
      // Polls the admin view until the check (every 200 ms) has closed the circuit; the cooldown alone lasts a minute.
      for (let poll = 0; poll < 200 && state !== 'healthy'; poll++) {
        const admin = await fetch(`${gateway.baseURL}/admin/deployments`, {
          headers: { authorization: `Bearer ${chaosMasterKey}` },
        });
        const { data } = (await admin.json()) as { data: { id: string; state: string }[] };
        state = data.find((entry) => entry.id === 'health-checked/0')?.state ?? 'missing';
        if (state !== 'healthy') await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(state).toBe('healthy');
      // The checks asked for the model list (GET, no model), never a completion.
      expect(upstream.requests.get('')).toBeGreaterThan(0);
    },
  );

  it('a cooled deployment is back as soon as its cooldown is over (no background health check)', async () => {
    // flaky:4 fails its first four requests; its circuit opens after two, for 300 ms, then a probe finds it well.
    let served = 0;
    let attempts = 0;
    while (served < 3 && attempts < 1000) {
      attempts++;
      const response = await chat(gateway, 'recovers');
      await response.text();
      if (response.status === 200) served++;
      else expect([502, 503]).toContain(response.status);
      // A poll interval while the circuit is open, not a wait for the cooldown: the loop ends on the first successes.
      if (response.status === 503) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(served).toBe(3);
    expect(upstream.requests.get('flaky:4')).toBeLessThanOrEqual(4 + 3);
  });
});
