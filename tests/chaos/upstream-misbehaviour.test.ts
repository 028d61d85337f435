import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../e2e/gateway-process.ts';
import { gatewayRuntimes } from '../e2e/gateway-starters.ts';
import { chaosClient, chaosMasterKey, collectChatStream, isLive } from './chaos-client.ts';
import {
  burstText,
  hostileEnvironment,
  hostileGatewayConfig,
  hostileServerLimits,
  hostileUpstreamApiKey,
  startHostileUpstream,
  waitForAbortedResponse,
  type HostileUpstream,
} from './hostile-upstream.ts';

/** Answers of tens of megabytes, served by a gateway of their own (see `sizeCapLimits`). */
const hugeBehaviours = ['huge:40', 'huge-error:20'];
const behaviours = [
  'text',
  'hang',
  'stall-body',
  'html',
  'error-in-200',
  'truncated',
  'gzip',
  'json-for-stream',
  'no-end',
  'hang-after-end',
  'reset-after-end',
  'disconnect:5',
  'deep-json:100000',
  'echo-key:401',
  'echo-key:403',
  'echo-key:500',
  'stream-echo-key',
];
const dialects = ['openai', 'anthropic'] as const;

/**
 * The size caps are measured against answers of tens of megabytes, which take the upstream and the gateway seconds to
 * build and read on a loaded machine: with the suite's 1.5 s timeouts, a slow read ended as a 504 before the cap was
 * reached. The gateway that serves them keeps the caps and waits as long as a real deployment would.
 */
const sizeCapLimits = { ...hostileServerLimits, upstreamTimeoutMs: 60_000, upstreamBodyTimeoutMs: 60_000 };
interface ErrorAnswer {
  status: number;
  contentType: string | null;
  error: { message: string; type: string; code: string | null };
}

async function postChat(gateway: RunningGateway, model: string, stream = false): Promise<ErrorAnswer> {
  const response = await fetch(`${gateway.baseURL}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${chaosMasterKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'Hello' }] }),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    error: (JSON.parse(text) as { error: ErrorAnswer['error'] }).error,
  };
}

/** A stream request read to the end of its body, as a plain HTTP client (curl, a proxy) reads it. */
async function rawStream(gateway: RunningGateway, model: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${gateway.baseURL}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${chaosMasterKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'Hello' }] }),
    signal: AbortSignal.timeout(60_000),
  });
  return { status: response.status, text: await response.text() };
}

/** The content a raw OpenAI chat stream carries, joined. */
function streamedContent(text: string): string {
  return text
    .split('\n\n')
    .filter((event) => event.startsWith('data: {'))
    .flatMap(
      (event) =>
        (JSON.parse(event.slice('data: '.length)) as { choices: { delta: { content?: string | null } }[] }).choices,
    )
    .map((choice) => choice.delta.content ?? '')
    .join('');
}

async function streamChat(client: OpenAI, model: string) {
  const stream = await client.chat.completions.create({
    model,
    stream: true,
    messages: [{ role: 'user', content: 'Hello' }],
  });
  return await collectChatStream(stream);
}

// Defects 5, 6, 8 and 9 of the hardening issue: an upstream that stalls after its headers held the client forever;
// huge bodies were buffered whole; an upstream's error quoting the gateway's provider key reached the client; and
// pass-through relayed whatever a 200 carried. Each behaviour runs through pass-through (openai/...) and the
// Anthropic translation (anthropic/...), on every runtime.
describe.each(gatewayRuntimes)('a misbehaving upstream on $name', (runtime) => {
  let upstream: HostileUpstream;
  let gateway: RunningGateway;
  let sizeCapGateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    upstream = await startHostileUpstream();
    const environment = { ...hostileEnvironment, TORII_MASTER_KEY: chaosMasterKey };
    [gateway, sizeCapGateway] = await Promise.all([
      runtime.start(hostileGatewayConfig(upstream.url, behaviours, hostileServerLimits), environment),
      runtime.start(hostileGatewayConfig(upstream.url, hugeBehaviours, sizeCapLimits), environment),
    ]);
    client = chaosClient(gateway);
  });

  afterAll(async () => {
    await Promise.all([gateway?.stop(), sizeCapGateway?.stop()]);
    await upstream?.close();
  });

  it.each(dialects)(
    '%s: answers 504 when the upstream stalls in the middle of its body, and aborts it',
    async (dialect) => {
      const answer = await postChat(gateway, `${dialect}/stall-body`);
      expect(answer).toMatchObject({ status: 504, error: { code: 'upstream_timeout', type: 'timeout_error' } });
      expect(answer.error.message).toMatch(/did not finish sending its response body within 1500 ms/);
    },
  );

  it.each(dialects)('%s: ends a stream that goes silent with an error event, not a hang', async (dialect) => {
    const result = await streamChat(client, `${dialect}/stall-body`);
    expect(result.error).toBeInstanceOf(OpenAI.APIError);
    expect(String((result.error as Error).message)).toMatch(/sent nothing for 1500 ms/);
  });

  it.each(dialects)('%s: refuses an answer over the size cap with a 502, without holding it', async (dialect) => {
    const answer = await postChat(sizeCapGateway, `${dialect}/huge:40`);
    expect(answer).toMatchObject({ status: 502, error: { code: 'upstream_response_too_large' } });
    expect(await isLive(sizeCapGateway)).toBe(true);
  });

  it.each(dialects)('%s: reports a huge upstream error body as a 502 without its megabytes', async (dialect) => {
    const answer = await postChat(sizeCapGateway, `${dialect}/huge-error:20`);
    expect(answer.status).toBe(502);
    expect(answer.error.message.length).toBeLessThan(2_000);
  });

  it.each(dialects.flatMap((dialect) => ['html', 'error-in-200', 'truncated', 'gzip'].map((kind) => [dialect, kind])))(
    '%s: answers a 200 whose body is %s with a 502 in the OpenAI envelope',
    async (dialect, kind) => {
      const answer = await postChat(gateway, `${dialect}/${kind}`);
      expect(answer.status).toBe(502);
      expect(answer.contentType).toMatch(/application\/json/);
      expect(answer.error.type).toBe('upstream_error');
    },
  );

  it('answers a translated answer nested 100,000 levels deep with a 502, not a stack overflow', async () => {
    const answer = await postChat(gateway, 'anthropic/deep-json:100000');
    expect(answer.status).toBe(502);
    expect(answer.error.code).toBe('upstream_invalid_response');
    expect(answer.error.message).toMatch(/nests deeper than 128 levels/);
    const streamed = await streamChat(client, 'anthropic/deep-json:100000');
    expect(streamed.error).toBeInstanceOf(OpenAI.APIError);
    expect(String((streamed.error as Error).message)).toMatch(/nests deeper than 128 levels/);
    expect(await isLive(gateway)).toBe(true);
  });

  it('keeps the upstream message of an error inside a 200', async () => {
    const answer = await postChat(gateway, 'openai/error-in-200');
    expect(answer.error.message).toMatch(/The server had an error while processing your request/);
  });

  it.each(dialects)('%s: answers a stream request served plain JSON with a 502 before any event', async (dialect) => {
    const answer = await postChat(gateway, `${dialect}/json-for-stream`, true);
    expect(answer).toMatchObject({ status: 502, error: { code: 'upstream_invalid_response' } });
  });

  it.each(dialects.flatMap((dialect) => ['no-end', 'truncated', 'disconnect:5'].map((kind) => [dialect, kind])))(
    '%s: ends a stream that stops early (%s) with an error event, never a clean end',
    async (dialect, kind) => {
      const result = await streamChat(client, `${dialect}/${kind}`);
      expect(result.error).toBeInstanceOf(OpenAI.APIError);
      expect(String((result.error as Error).message)).toMatch(/stream|upstream/i);
    },
  );

  it.each(dialects.flatMap((dialect) => ['hang-after-end', 'reset-after-end'].map((kind) => [dialect, kind])))(
    '%s: ends a complete stream at its final event when the upstream then misbehaves (%s), adding nothing after it',
    async (dialect, kind) => {
      const abortedBefore = upstream.abortedResponses;
      // Read to the end of the body: a gateway that waited for the upstream's end would hang here until its idle
      // timeout, and then add an error event after [DONE].
      const answer = await rawStream(gateway, `${dialect}/${kind}`);
      expect(answer.status).toBe(200);
      expect(answer.text.endsWith('data: [DONE]\n\n')).toBe(true);
      expect(answer.text.match(/\[DONE\]/g)).toHaveLength(1);
      expect(answer.text).not.toContain('"error"');
      expect(streamedContent(answer.text)).toBe(burstText(3));
      // The upstream that holds its connection open after its final event is let go within the gateway's bounds.
      if (kind === 'hang-after-end') await waitForAbortedResponse(upstream, abortedBefore);
      expect(await isLive(gateway)).toBe(true);
    },
  );

  it.each(dialects.flatMap((dialect) => [401, 403, 500].map((status) => [dialect, status])))(
    "%s: never lets an upstream %s that quotes the gateway's provider key show it to the client or the logs",
    async (dialect, status) => {
      const answer = await postChat(gateway, `${dialect}/echo-key:${status}`);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(JSON.stringify(answer)).not.toContain(hostileUpstreamApiKey);
      expect(answer.error.message).toContain('[redacted]');
      const streamed = await streamChat(client, `${dialect}/echo-key:${status}`).catch((error: unknown) => error);
      expect(streamed).toBeInstanceOf(OpenAI.APIError);
      expect(String((streamed as Error).message)).not.toContain(hostileUpstreamApiKey);
      expect(gateway.output()).not.toContain(hostileUpstreamApiKey);
    },
  );

  it.each(dialects)(
    "%s: an error event in the stream that quotes the gateway's provider key reaches the client redacted",
    async (dialect) => {
      const streamed = await streamChat(client, `${dialect}/stream-echo-key`);
      expect(streamed.text).toBe('partial ');
      expect(streamed.error).toBeInstanceOf(OpenAI.APIError);
      expect(String((streamed.error as Error).message)).toContain('[redacted]');
      expect(JSON.stringify(streamed) + String((streamed.error as Error).message)).not.toContain(hostileUpstreamApiKey);
      expect(gateway.output()).not.toContain(hostileUpstreamApiKey);
    },
  );

  it('still serves ordinary requests on both paths after all of it', async () => {
    for (const dialect of dialects) {
      const completion = await client.chat.completions.create({
        model: `${dialect}/text`,
        messages: [{ role: 'user', content: 'Hello' }],
      });
      expect(completion.choices[0]?.message.content?.length).toBeGreaterThan(0);
      const streamed = await streamChat(client, `${dialect}/text`);
      expect(streamed.error).toBeUndefined();
      expect(streamed.finishReasons).toEqual(['stop']);
    }
    expect(upstream.openConnections()).toBeLessThan(behaviours.length * 4);
  });
});
