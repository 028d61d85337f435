import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isGatewayError, type GatewayError } from '../../src/errors.ts';
import { requestAccessToken, type TokenEndpointRequest } from './token-endpoint.ts';

type Handler = (request: IncomingMessage, body: string, response: ServerResponse) => void;

let server: Server;
let baseURL: string;
let handler: Handler = (_request, _body, response) => response.end();

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => handler(request, body, response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const secret = 'super-secret-value-123';

function tokenRequest(overrides: Partial<TokenEndpointRequest> = {}): TokenEndpointRequest {
  return {
    url: `${baseURL}/tenant/oauth2/v2.0/token`,
    form: { grant_type: 'client_credentials', client_id: 'client', client_secret: secret, scope: 'scope/.default' },
    provider: 'azure-openai',
    label: 'Microsoft Entra ID',
    now: () => 1_000_000,
    ...overrides,
  };
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isGatewayError(error)) throw new Error(`expected a GatewayError, got ${String(error)}`);
  return error;
}

describe('requestAccessToken', () => {
  it('posts the form and reads the token and its expiry', async () => {
    let seen: { method?: string; type?: string; body?: string; url?: string } = {};
    handler = (request, body, response) => {
      seen = { method: request.method, type: request.headers['content-type'], body, url: request.url };
      json(response, 200, { token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: 'eyJ0' });
    };
    const token = await requestAccessToken(tokenRequest());
    expect(token).toEqual({ token: 'eyJ0', expiresAt: 1_000_000 + 3_599_000 });
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/tenant/oauth2/v2.0/token');
    expect(seen.type).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(seen.body))).toEqual({
      grant_type: 'client_credentials',
      client_id: 'client',
      client_secret: secret,
      scope: 'scope/.default',
    });
  });

  it('accepts expires_in as a numeric string', async () => {
    handler = (_request, _body, response) =>
      json(response, 200, { token_type: 'Bearer', expires_in: '3600', access_token: 'v1-token' });
    expect(await requestAccessToken(tokenRequest())).toEqual({ token: 'v1-token', expiresAt: 1_000_000 + 3_600_000 });
  });

  it("maps an error answer to a 502 with the endpoint's error, hiding the secret", async () => {
    handler = (_request, _body, response) =>
      json(response, 401, {
        error: 'invalid_client',
        error_description: `AADSTS7000215: Invalid client secret provided. Got ${secret}.`,
        error_codes: [7000215],
      });
    const error = await failure(requestAccessToken(tokenRequest()));
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_authentication_failed');
    expect(error.retryable).toBe(true);
    expect(error.upstreamStatus).toBe(401);
    expect(error.message).toContain('invalid_client: AADSTS7000215');
    expect(error.message).not.toContain(secret);
    expect(JSON.stringify(error.upstreamBody)).not.toContain(secret);
  });

  it('maps a malformed success and a non-Bearer token to 502s', async () => {
    handler = (_request, _body, response) => json(response, 200, { access_token: 'x' });
    expect((await failure(requestAccessToken(tokenRequest()))).code).toBe('upstream_authentication_failed');
    handler = (_request, _body, response) =>
      json(response, 200, { access_token: 'x', expires_in: 60, token_type: 'mac' });
    expect((await failure(requestAccessToken(tokenRequest()))).message).toContain('"mac"');
    handler = (_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html>proxy</html>');
    };
    expect((await failure(requestAccessToken(tokenRequest()))).status).toBe(502);
  });

  it('maps a timeout and a network error to 502s', async () => {
    handler = () => undefined; // never answers
    const timedOut = await failure(requestAccessToken(tokenRequest({ timeoutMs: 50 })));
    expect(timedOut.message).toContain('did not answer within 50 ms');
    expect(timedOut.code).toBe('upstream_authentication_failed');

    const unreachable = await failure(requestAccessToken(tokenRequest({ url: 'http://127.0.0.1:1/token' })));
    expect(unreachable.code).toBe('upstream_authentication_failed');
    expect(unreachable.message).toContain('could not be reached');
    expect(unreachable.message).not.toContain(secret);
  });
});
