import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { builtinProviders } from '../../providers/index.ts';
import { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
import { parseGatewayConfig } from '../../src/config/config-parse.ts';
import { createGateway } from '../../src/gateway.ts';
import type { UsageEvent } from '../../src/usage/usage-event.ts';
import {
  hostileGatewayConfig,
  hostileUpstreamApiKey,
  startHostileUpstream,
  type HostileUpstream,
} from '../chaos/hostile-upstream.ts';

const masterKey = 'sk-request-end-master-key';

// A request ends exactly once, whoever ends it: the middleware for JSON answers and errors (a stream request that
// failed before its stream was built included), the stream for streams (finished, broken, or left by the client).
// Exactly one usage event each, with the status the request ended with, through the real gateway app and a real
// (hostile) upstream, on both paths.
describe('the end of a request (createGateway, hostile upstream)', { timeout: 60_000 }, () => {
  let upstream: HostileUpstream;
  let gateway: ReturnType<typeof createGateway>;
  const events: UsageEvent[] = [];

  beforeAll(async () => {
    upstream = await startHostileUpstream();
    gateway = createGateway({
      config: parseGatewayConfig(
        hostileGatewayConfig(upstream.url, ['text', 'burst:3000', 'json-for-stream', 'error:500', 'no-end']),
        { HOSTILE_KEY: hostileUpstreamApiKey },
      ),
      providers: builtinProviders,
      authenticator: createMasterKeyAuthenticator(masterKey),
      services: { logger: { info() {}, warn() {}, error() {} } },
      accounting: { recordUsage: (event) => events.push(event) },
    });
  }, 60_000);

  afterAll(async () => {
    await upstream?.close();
  });

  function send(model: string, stream: boolean, clientRequestId: string): Promise<Response> | Response {
    return gateway.request('/v1/chat/completions', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${masterKey}`,
        'content-type': 'application/json',
        'x-request-id': clientRequestId,
      },
      body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hi' }] }),
    });
  }

  const eventsOf = (clientRequestId: string) => events.filter((event) => event.clientRequestId === clientRequestId);

  it.each([
    ['text', false, 200],
    ['text', true, 200],
    ['json-for-stream', true, 502],
    ['error:500', true, 502],
    ['error:500', false, 502],
    ['no-end', true, 502],
  ] as const)(
    '%s (stream: %s): one usage event with status %s, for both dialects',
    async (behaviour, stream, status) => {
      for (const dialect of ['openai', 'anthropic']) {
        const clientRequestId = `end-${dialect}-${behaviour}-${stream}`.replace(':', '-');
        const response = await send(`${dialect}/${behaviour}`, stream, clientRequestId);
        await response.text();
        await vi.waitFor(() => expect(eventsOf(clientRequestId)).toHaveLength(1));
        expect(eventsOf(clientRequestId)[0]?.status).toBe(status);
      }
      // Nothing more arrives later (a second end would add its event in the same turn as the first or right after).
      await new Promise((resolve) => setImmediate(resolve));
      for (const dialect of ['openai', 'anthropic'])
        expect(eventsOf(`end-${dialect}-${behaviour}-${stream}`.replace(':', '-'))).toHaveLength(1);
    },
  );

  it('a stream the client leaves after its first chunk ends once, as 499', async () => {
    for (const dialect of ['openai', 'anthropic']) {
      const clientRequestId = `end-${dialect}-left`;
      const response = await send(`${dialect}/burst:3000`, true, clientRequestId);
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      await reader.read();
      await reader.cancel();
      await vi.waitFor(() => expect(eventsOf(clientRequestId)).toHaveLength(1));
      expect(eventsOf(clientRequestId)[0]?.status).toBe(499);
    }
  });
});
