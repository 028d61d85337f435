import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createMasterKeyAuthenticator } from './auth/master-key-authenticator.ts';
import { parseGatewayConfig } from './config/config-parse.ts';
import { createGateway } from './gateway.ts';

const gateway = () =>
  createGateway({
    config: parseGatewayConfig({ modelGroups: {} }),
    providers: { translators: {}, presets: {} },
    authenticator: createMasterKeyAuthenticator('sk-unknown-url-test'),
  });

describe('an unknown path', () => {
  it('answers the JSON 404 on its own and under a mount, in the client API envelope the path suggests', async () => {
    const host = new Hono();
    host.route('/llm', gateway());
    for (const [app, prefix] of [
      [gateway(), ''],
      [host, '/llm'],
    ] as const) {
      const openai = await app.request(`${prefix}/v1/nothing-here`);
      expect(openai.status).toBe(404);
      expect(await openai.json()).toMatchObject({ error: { code: 'unknown_url', type: 'invalid_request_error' } });
      const anthropic = await app.request(`${prefix}/v1/messages/batches`, { method: 'POST' });
      expect(anthropic.status).toBe(404);
      expect(await anthropic.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    }
    // The host's own paths outside the mount stay the host's.
    expect((await host.request('/elsewhere')).headers.get('content-type')).not.toMatch(/json/);
  });
});
