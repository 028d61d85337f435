import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../e2e/gateway-process.ts';
import { serverRuntimes } from '../e2e/gateway-starters.ts';
import { chaosMasterKey, isLive } from './chaos-client.ts';
import {
  hostileEnvironment,
  hostileGatewayConfig,
  startHostileUpstream,
  type HostileUpstream,
} from './hostile-upstream.ts';

interface Answer {
  status: number;
  contentType: string | null;
  body: { error?: { message: string; type: string; param: string | null; code: string | null } };
}

async function post(
  gateway: RunningGateway,
  path: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await fetch(`${gateway.baseURL}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${chaosMasterKey}`, 'content-type': 'application/json', ...headers },
    body,
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  let parsed: Answer['body'] = {};
  try {
    parsed = JSON.parse(text) as Answer['body'];
  } catch {
    // not JSON: the assertion on the envelope reports it
  }
  return { status: response.status, contentType: response.headers.get('content-type'), body: parsed };
}

/** A chat body whose first message's content is `content` (raw JSON text). */
function chatWithContent(content: string): string {
  return `{"model":"openai/text","messages":[{"role":"user","content":${content}}]}`;
}

function expectClientError(answer: Answer): void {
  expect(answer.status).toBeGreaterThanOrEqual(400);
  expect(answer.status).toBeLessThan(500);
  expect(answer.contentType).toMatch(/application\/json/);
  expect(answer.body.error?.type).toBe('invalid_request_error');
}

// Hostile clients, on every runtime: deep nesting and huge arrays (defect 10), absurd Authorization headers (defect
// 7), and bodies that are not what they claim. Each gets a 4xx in the OpenAI envelope naming the field, in bounded
// time, and the gateway keeps serving. Slow clients (slowloris, trickled bodies) are Node's server's to bound:
// tests/chaos/client-timeouts.test.ts.
describe.each(serverRuntimes)('a misbehaving client on $name', (runtime) => {
  let upstream: HostileUpstream;
  let gateway: RunningGateway;

  beforeAll(async () => {
    upstream = await startHostileUpstream();
    gateway = await runtime.start(hostileGatewayConfig(upstream.url, ['text']), {
      ...hostileEnvironment,
      TORII_MASTER_KEY: chaosMasterKey,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
  });

  it('refuses a body nested 5,000 levels deep with a 400 naming the field', async () => {
    const deep = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
    const answer = await post(gateway, '/v1/chat/completions', chatWithContent(deep));
    expectClientError(answer);
    expect(answer.body.error?.param).toMatch(/^messages/);
    const deepObject = `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`;
    const metadata = await post(
      gateway,
      '/v1/chat/completions',
      `{"model":"openai/text","metadata":${deepObject},"messages":[{"role":"user","content":"hi"}]}`,
    );
    expectClientError(metadata);
    expect(metadata.body.error?.param).toMatch(/^metadata/);
  });

  it('refuses an array of 1,900,000 elements with a 400 naming the field, and keeps serving', async () => {
    const huge = `[${'0,'.repeat(1_899_999)}0]`;
    const answer = await post(gateway, '/v1/chat/completions', chatWithContent(huge));
    expectClientError(answer);
    expect(answer.body.error?.param).toMatch(/^messages/);
    expect(await isLive(gateway)).toBe(true);
  });

  it('answers a 16 KB Authorization header of spaces with a 401 at once', async () => {
    const answer = await post(gateway, '/v1/chat/completions', chatWithContent('"hi"'), {
      authorization: `Bearer a${' '.repeat(16_000)}b`,
    });
    expect(answer.status).toBe(401);
    expect(answer.body.error?.code).toBe('invalid_api_key');
  });

  it.each([
    ['a body that is not JSON', '{"model": "openai/text", "messages": [', 400],
    ['a JSON array', '[1,2,3]', 400],
    ['an empty body', '', 400],
    ['a string where messages go', '{"model":"openai/text","messages":"hi"}', 400],
    ['an unknown model group', '{"model":"nope","messages":[{"role":"user","content":"hi"}]}', 404],
  ])('answers %s in the OpenAI envelope', async (_name, body, status) => {
    const answer = await post(gateway, '/v1/chat/completions', body);
    expect(answer.status).toBe(status);
    expect(answer.contentType).toMatch(/application\/json/);
    expect(answer.body.error?.message.length).toBeGreaterThan(0);
  });

  it('does not echo a 2 MB model name back: the 404 quotes its first 256 characters and its length', async () => {
    const name = `openai/${'x'.repeat(2_000_000)}`;
    const answer = await post(
      gateway,
      '/v1/chat/completions',
      `{"model":"${name}","messages":[{"role":"user","content":"hi"}]}`,
    );
    expect(answer.status).toBe(404);
    expect(answer.body.error?.code).toBe('model_not_found');
    expect(answer.body.error?.message.length).toBeLessThan(400);
    expect(answer.body.error?.message).toContain('(2000007 characters)');
  });

  it('still serves an ordinary request after all of it', async () => {
    const answer = await post(gateway, '/v1/chat/completions', chatWithContent('"hi"'));
    expect(answer.status).toBe(200);
  });
});
