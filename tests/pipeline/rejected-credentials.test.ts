import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinProviders } from '../../providers/index.ts';
import { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
import { parseGatewayConfig } from '../../src/config/config-parse.ts';
import { createGateway } from '../../src/gateway.ts';

/*
 * A cached OAuth token the upstream stops accepting (revoked, its service principal's secret rotated) must not be sent
 * until it would have expired: the gateway drops it on the upstream's 401 and the next request fetches a fresh one.
 * Azure OpenAI with Entra ID client credentials, a local token endpoint minting `token-1`, `token-2` ..., and a local
 * Azure that refuses `token-1`.
 */

const masterKey = 'sk-torii-rejected-credentials';
const azureText = readFileSync(new URL('../../providers/azure/__fixtures__/text.json', import.meta.url), 'utf8');
let server: Server;
let url: string;
let tokensMinted = 0;
const bearersSeen: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (request.url?.endsWith('/oauth2/v2.0/token')) {
        tokensMinted += 1;
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ token_type: 'Bearer', expires_in: 3600, access_token: `token-${tokensMinted}` }));
        return;
      }
      const bearer = request.headers.authorization?.replace(/^Bearer /, '') ?? '';
      bearersSeen.push(bearer);
      if (bearer === 'token-1') {
        response.writeHead(401, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ error: { code: '401', message: 'Access token is missing, invalid or expired.' } }),
        );
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(azureText);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('an upstream that rejects a cached token', () => {
  it('gets the deployment a fresh token instead of sending the rejected one again', async () => {
    const app = createGateway({
      config: parseGatewayConfig({
        modelGroups: {
          gpt: {
            deployments: [
              {
                provider: 'azure',
                model: 'gpt-4o-prod',
                baseURL: url,
                options: { tenantId: 'rejected', clientId: 'torii', clientSecret: 'secret-value', authorityHost: url },
              },
            ],
            retry: { retries: 0 },
            // A 401 opens the deployment's circuit at once (its credential is bad); the probe after it gets a new token.
            cooldown: { cooldownMs: 100 },
          },
        },
      }),
      providers: builtinProviders,
      authenticator: createMasterKeyAuthenticator(masterKey),
    });
    const ask = () =>
      app.request('/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt', messages: [{ role: 'user', content: 'Hello' }] }),
      });
    const refused = await ask();
    expect(refused.status).toBe(502);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('upstream_authentication_failed');
    // Until the short cooldown is over the group answers 503; the probe after it carries a freshly fetched token.
    let answered = await ask();
    for (let attempt = 0; attempt < 200 && answered.status === 503; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      answered = await ask();
    }
    expect(answered.status).toBe(200);
    expect(bearersSeen).toEqual(['token-1', 'token-2']);
    expect(tokensMinted).toBe(2);
  });
});
