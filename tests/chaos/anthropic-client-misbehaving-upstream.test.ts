import Anthropic from '@anthropic-ai/sdk';
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
/** `anthropic/...` is passed through to an Anthropic upstream; `openai/...` is translated for an OpenAI-shaped one. */
const upstreams = ['anthropic', 'openai'] as const;
interface AnthropicErrorAnswer {
  status: number;
  body: { type: string; error: { type: string; message: string } };
}

async function postMessage(gateway: RunningGateway, model: string, stream = false): Promise<AnthropicErrorAnswer> {
  const response = await fetch(`${gateway.baseURL}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': chaosMasterKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] }),
    signal: AbortSignal.timeout(60_000),
  });
  return { status: response.status, body: (await response.json()) as AnthropicErrorAnswer['body'] };
}

/** Reads a whole Messages stream with the real SDK, keeping the error it ended with instead of throwing. */
async function streamMessage(client: Anthropic, model: string): Promise<{ text: string; error: unknown }> {
  const stream = client.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] });
  let text = '';
  stream.on('text', (delta) => (text += delta));
  try {
    await stream.finalMessage();
    return { text, error: undefined };
  } catch (error) {
    return { text, error };
  }
}

// Issue 9: gateways that added a Messages endpoint forwarded raw bodies to non-Anthropic upstreams and, on streams,
// hung with a 200 and zero bytes. Every hostile behaviour reaches an Anthropic client through pass-through and
// translation alike, always as Anthropic's envelope before a stream starts and as an in-band `error` event after.
describe.each(gatewayRuntimes)('an Anthropic client behind a misbehaving upstream on $name', (runtime) => {
  let upstream: HostileUpstream;
  let gateway: RunningGateway;
  let client: Anthropic;

  beforeAll(async () => {
    upstream = await startHostileUpstream();
    gateway = await runtime.start(hostileGatewayConfig(upstream.url, behaviours, hostileServerLimits), {
      ...hostileEnvironment,
      TORII_MASTER_KEY: chaosMasterKey,
    });
    client = new Anthropic({ baseURL: gateway.baseURL, apiKey: chaosMasterKey, maxRetries: 0, timeout: 60_000 });
  });

  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
  });

  it.each(upstreams)('%s: a stream to an upstream that never answers ends in a 504, not a silent 200', async (kind) => {
    const answer = await postMessage(gateway, `${kind}/hang`, true);
    expect(answer).toMatchObject({ status: 504, body: { type: 'error', error: { type: 'timeout_error' } } });
  });

  it.each(upstreams)('%s: answers 504 when the upstream stalls in the middle of its body', async (kind) => {
    const answer = await postMessage(gateway, `${kind}/stall-body`);
    expect(answer).toMatchObject({ status: 504, body: { type: 'error', error: { type: 'timeout_error' } } });
  });

  it.each(upstreams.flatMap((kind) => ['html', 'error-in-200', 'truncated', 'gzip'].map((bad) => [kind, bad])))(
    "%s: answers a broken 200 (%s) with a 502 in Anthropic's envelope",
    async (kind, bad) => {
      const answer = await postMessage(gateway, `${kind}/${bad}`);
      expect(answer).toMatchObject({ status: 502, body: { type: 'error', error: { type: 'api_error' } } });
    },
  );

  it.each(upstreams)('%s: answers a stream request served plain JSON with a 502 before any event', async (kind) => {
    const answer = await postMessage(gateway, `${kind}/json-for-stream`, true);
    expect(answer).toMatchObject({ status: 502, body: { type: 'error', error: { type: 'api_error' } } });
  });

  it.each(upstreams.flatMap((kind) => ['no-end', 'truncated', 'disconnect:5'].map((cut) => [kind, cut])))(
    '%s: ends a stream that stops early (%s) with an in-band error event the SDK raises',
    async (kind, cut) => {
      const result = await streamMessage(client, `${kind}/${cut}`);
      expect(result.error).toBeInstanceOf(Anthropic.APIError);
      expect(String((result.error as Error).message)).toMatch(/stream|upstream/i);
    },
  );

  it.each(upstreams.flatMap((kind) => ['hang-after-end', 'reset-after-end'].map((after) => [kind, after])))(
    '%s: ends a complete stream at message_stop when the upstream then misbehaves (%s), adding nothing after it',
    async (kind, after) => {
      const abortedBefore = upstream.abortedResponses;
      // Read to the end of the body, as a plain HTTP client does: waiting for the upstream's end would hang here.
      const response = await fetch(`${gateway.baseURL}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': chaosMasterKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({
          model: `${kind}/${after}`,
          stream: true,
          max_tokens: 64,
          messages: [{ role: 'user', content: 'Hello' }],
        }),
        signal: AbortSignal.timeout(60_000),
      });
      expect(response.status).toBe(200);
      const events = rawStreamEvents(await response.text());
      expect(events.at(-1)?.type).toBe('message_stop');
      expect(events.filter((event) => event.type === 'message_stop')).toHaveLength(1);
      expect(events.filter((event) => event.type === 'error')).toEqual([]);
      const text = events
        .filter((event) => event.type === 'content_block_delta')
        .map((event) => (JSON.parse(event.data) as { delta: { text?: string } }).delta.text ?? '')
        .join('');
      expect(text).toBe(burstText(3));
      if (after === 'hang-after-end') await waitForAbortedResponse(upstream, abortedBefore);
    },
  );

  it('answers a translated answer nested 100,000 levels deep with a 502, not a stack overflow', async () => {
    const answer = await postMessage(gateway, 'openai/deep-json:100000');
    expect(answer).toMatchObject({ status: 502, body: { type: 'error', error: { type: 'api_error' } } });
    expect(await isLive(gateway)).toBe(true);
  });

  it.each(upstreams.flatMap((kind) => [401, 500].map((status) => [kind, status])))(
    "%s: never shows an upstream %s that quotes the gateway's provider key",
    async (kind, status) => {
      const answer = await postMessage(gateway, `${kind}/echo-key:${status}`);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.body.type).toBe('error');
      expect(JSON.stringify(answer)).not.toContain(hostileUpstreamApiKey);
      const streamed = await streamMessage(client, `${kind}/echo-key:${status}`);
      expect(streamed.error).toBeInstanceOf(Anthropic.APIError);
      expect(String((streamed.error as Error).message)).not.toContain(hostileUpstreamApiKey);
      expect(gateway.output()).not.toContain(hostileUpstreamApiKey);
    },
  );

  it.each(upstreams)(
    "%s: an error event in the stream that quotes the gateway's provider key reaches the client redacted",
    async (kind) => {
      const streamed = await streamMessage(client, `${kind}/stream-echo-key`);
      expect(streamed.text).toBe('partial ');
      expect(streamed.error).toBeInstanceOf(Anthropic.APIError);
      expect(String((streamed.error as Error).message)).toContain('[redacted]');
      expect(String((streamed.error as Error).message)).not.toContain(hostileUpstreamApiKey);
      expect(gateway.output()).not.toContain(hostileUpstreamApiKey);
    },
  );

  it('still serves ordinary messages on both paths after all of it', async () => {
    for (const kind of upstreams) {
      const message = await client.messages.create({
        model: `${kind}/text`,
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Hello' }],
      });
      expect(message.content.length).toBeGreaterThan(0);
      const streamed = await streamMessage(client, `${kind}/text`);
      expect(streamed.error).toBeUndefined();
      expect(streamed.text.length).toBeGreaterThan(0);
    }
    expect(await isLive(gateway)).toBe(true);
  });
});
