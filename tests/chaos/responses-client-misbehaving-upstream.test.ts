import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../e2e/gateway-process.ts';
import { gatewayRuntimes } from '../e2e/gateway-starters.ts';
import { chaosMasterKey, isLive } from './chaos-client.ts';
import {
  burstText,
  clientApiHostileBehaviours,
  rawStreamEvents,
  hostileEnvironment,
  hostileGatewayConfig,
  hostileServerLimits,
  hostileUpstreamApiKey,
  startHostileUpstream,
  waitForAbortedResponse,
  type HostileUpstream,
} from './hostile-upstream.ts';

const behaviours = clientApiHostileBehaviours;
/**
 * `openai/...` is an OpenAI deployment, to which Responses requests are passed through (the hostile upstream answers
 * them in chat shapes, so every answer is also the wrong API's); `anthropic/...` is translated.
 */
const upstreams = ['openai', 'anthropic'] as const;
interface OpenAIErrorAnswer {
  status: number;
  body: { error: { type: string; message: string; code: string | null } };
}

async function postResponse(gateway: RunningGateway, model: string, stream = false): Promise<OpenAIErrorAnswer> {
  const response = await fetch(`${gateway.baseURL}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${chaosMasterKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, input: 'Hello' }),
    signal: AbortSignal.timeout(60_000),
  });
  return { status: response.status, body: (await response.json()) as OpenAIErrorAnswer['body'] };
}

/** Reads a whole Responses stream with the real SDK, keeping the error it ended with instead of throwing. */
async function streamResponse(client: OpenAI, model: string): Promise<{ text: string; error: unknown }> {
  const stream = client.responses.stream({ model, input: 'Hello' });
  let text = '';
  stream.on('response.output_text.delta', (event) => (text += event.delta));
  try {
    const final = await stream.finalResponse();
    if (final.status !== 'completed') return { text, error: new Error(`response ${final.status}`) };
    return { text, error: undefined };
  } catch (error) {
    return { text, error };
  }
}

// Issue 9: every hostile behaviour reaches a Responses client through pass-through and translation alike, as
// OpenAI's envelope before a stream starts and as an in-band `error` or `response.failed` event after, never a hang.
describe.each(gatewayRuntimes)('a Responses client behind a misbehaving upstream on $name', (runtime) => {
  let upstream: HostileUpstream;
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    upstream = await startHostileUpstream();
    gateway = await runtime.start(hostileGatewayConfig(upstream.url, behaviours, hostileServerLimits), {
      ...hostileEnvironment,
      TORII_MASTER_KEY: chaosMasterKey,
    });
    client = new OpenAI({ baseURL: `${gateway.baseURL}/v1`, apiKey: chaosMasterKey, maxRetries: 0, timeout: 60_000 });
  });

  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
  });

  it.each(upstreams)('%s: a stream to an upstream that never answers ends in a 504, not a silent 200', async (kind) => {
    const answer = await postResponse(gateway, `${kind}/hang`, true);
    expect(answer).toMatchObject({ status: 504, body: { error: { type: 'timeout_error' } } });
  });

  it.each(upstreams)('%s: answers 504 when the upstream stalls in the middle of its body', async (kind) => {
    const answer = await postResponse(gateway, `${kind}/stall-body`);
    expect(answer).toMatchObject({ status: 504, body: { error: { type: 'timeout_error' } } });
  });

  it.each(upstreams.flatMap((kind) => ['html', 'error-in-200', 'truncated', 'gzip'].map((bad) => [kind, bad])))(
    "%s: answers a broken 200 (%s) with a 502 in OpenAI's envelope",
    async (kind, bad) => {
      const answer = await postResponse(gateway, `${kind}/${bad}`);
      expect(answer).toMatchObject({ status: 502, body: { error: { type: 'upstream_error' } } });
    },
  );

  it.each(upstreams)('%s: answers a stream request served plain JSON with a 502 before any event', async (kind) => {
    const answer = await postResponse(gateway, `${kind}/json-for-stream`, true);
    expect(answer).toMatchObject({ status: 502, body: { error: { type: 'upstream_error' } } });
  });

  it.each(upstreams.flatMap((kind) => ['no-end', 'truncated', 'disconnect:5'].map((cut) => [kind, cut])))(
    '%s: ends a stream that stops early (%s) with an in-band error event the SDK raises',
    async (kind, cut) => {
      const result = await streamResponse(client, `${kind}/${cut}`);
      expect(result.error).toBeInstanceOf(Error);
      expect(String((result.error as Error).message)).toMatch(/stream|upstream|incomplete|failed/i);
    },
  );

  // Translated only: the `openai/...` upstream answers Responses requests in chat shapes, which have no final
  // Responses event to end at.
  it.each(['hang-after-end', 'reset-after-end'])(
    'anthropic: ends a complete stream at response.completed when the upstream then misbehaves (%s)',
    async (after) => {
      const abortedBefore = upstream.abortedResponses;
      const response = await fetch(`${gateway.baseURL}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${chaosMasterKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: `anthropic/${after}`, stream: true, input: 'Hello' }),
        signal: AbortSignal.timeout(60_000),
      });
      expect(response.status).toBe(200);
      const events = rawStreamEvents(await response.text());
      expect(events.at(-1)?.type).toBe('response.completed');
      expect(events.filter((event) => /failed|incomplete|error/.test(event.type))).toEqual([]);
      const text = events
        .filter((event) => event.type === 'response.output_text.delta')
        .map((event) => (JSON.parse(event.data) as { delta: string }).delta)
        .join('');
      expect(text).toBe(burstText(3));
      if (after === 'hang-after-end') await waitForAbortedResponse(upstream, abortedBefore);
    },
  );

  it('answers a translated answer nested 100,000 levels deep with a 502, not a stack overflow', async () => {
    const answer = await postResponse(gateway, 'openai/deep-json:100000');
    expect(answer).toMatchObject({ status: 502, body: { error: { type: 'upstream_error' } } });
    expect(await isLive(gateway)).toBe(true);
  });

  it.each(upstreams.flatMap((kind) => [401, 500].map((status) => [kind, status])))(
    "%s: never shows an upstream %s that quotes the gateway's provider key",
    async (kind, status) => {
      const answer = await postResponse(gateway, `${kind}/echo-key:${status}`);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.body.error.message.length).toBeGreaterThan(0);
      expect(JSON.stringify(answer)).not.toContain(hostileUpstreamApiKey);
      const streamed = await streamResponse(client, `${kind}/echo-key:${status}`);
      expect(streamed.error).toBeInstanceOf(OpenAI.APIError);
      expect(String((streamed.error as Error).message)).not.toContain(hostileUpstreamApiKey);
      expect(gateway.output()).not.toContain(hostileUpstreamApiKey);
    },
  );

  it('still serves ordinary translated responses after all of it', async () => {
    const created = await client.responses.create({ model: 'anthropic/text', input: 'Hello' });
    expect(created.output_text.length).toBeGreaterThan(0);
    const streamed = await streamResponse(client, 'anthropic/text');
    expect(streamed.error).toBeUndefined();
    expect(streamed.text.length).toBeGreaterThan(0);
    expect(await isLive(gateway)).toBe(true);
  });
});
