import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinProviders } from '../../providers/index.ts';
import { createMasterKeyAuthenticator } from '../../src/auth/master-key-authenticator.ts';
import { parseGatewayConfig } from '../../src/config/config-parse.ts';
import { createGateway } from '../../src/gateway.ts';

/*
 * A same-dialect chat request goes to the upstream as the client's own text when nothing needs changing (no second
 * serialisation), and is serialised again when it must be: another upstream model name, a usage request to add, or a
 * key a first-wins parser could read differently from the gateway (`{"model":"a","model":"b"}`).
 */

const masterKey = 'sk-torii-verbatim';
const answer = readFileSync(
  new URL('../../providers/openai-compatible/__fixtures__/text.json', import.meta.url),
  'utf8',
);
let server: Server;
let url: string;
const bodiesSeen: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      bodiesSeen.push(Buffer.concat(chunks).toString('utf8'));
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function gateway() {
  return createGateway({
    config: parseGatewayConfig({
      modelGroups: {
        'gpt-4o-mini': { deployments: [{ provider: 'openai', model: 'gpt-4o-mini', baseURL: url, apiKey: 'sk-up' }] },
        fast: { deployments: [{ provider: 'openai', model: 'gpt-4o-mini', baseURL: url, apiKey: 'sk-up' }] },
      },
    }),
    providers: builtinProviders,
    authenticator: createMasterKeyAuthenticator(masterKey),
  });
}

async function send(body: string): Promise<{ status: number; upstreamBody: string | undefined }> {
  const before = bodiesSeen.length;
  const response = await gateway().request('/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' },
    body,
  });
  await response.text();
  return { status: response.status, upstreamBody: bodiesSeen[before] };
}

describe('a same-dialect chat request', () => {
  it('goes to the upstream as the client wrote it when it needs no edit', async () => {
    const text =
      '{ "model" : "gpt-4o-mini",\n  "messages": [{"role": "user", "content": "caf\\u00e9, the \\"model\\" field"}],\n  "temperature": 0.50 }';
    const { status, upstreamBody } = await send(text);
    expect(status).toBe(200);
    expect(upstreamBody).toBe(text);
  });

  it('is serialised again with the upstream model name when the group is called differently', async () => {
    const { upstreamBody } = await send('{"model": "fast", "messages": [{"role": "user", "content": "hi"}]}');
    expect(JSON.parse(upstreamBody!)).toEqual({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  });

  it('never carries a duplicate key or an escaped key spelling to the upstream', async () => {
    const duplicate = await send('{"model":"other","messages":[{"role":"user","content":"hi"}],"model":"gpt-4o-mini"}');
    expect(duplicate.status).toBe(200);
    expect(duplicate.upstreamBody).toBe('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}');
    const escaped = await send(
      '{"\\u006dodel":"other","model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}',
    );
    expect(escaped.upstreamBody).toBe('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}');
  });

  it('adds the usage request to a stream that did not ask for it, and keeps one that did as written', async () => {
    const asked = await send('{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}');
    expect(JSON.parse(asked.upstreamBody!)).toMatchObject({ stream_options: { include_usage: true } });
    const text =
      '{"model":"gpt-4o-mini", "stream":true, "stream_options":{"include_usage":true}, "messages":[{"role":"user","content":"hi"}]}';
    const kept = await send(text);
    expect(kept.upstreamBody).toBe(text);
  });
});
