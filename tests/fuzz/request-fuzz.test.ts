import { seededRandom } from '../support/seeded-random.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../adapters/library/index.ts';
import { mockUpstreamApiKey, startMockUpstream, type MockUpstream } from '../mock-upstream/mock-upstream.ts';

const validChat = {
  model: 'fast',
  messages: [
    { role: 'system', content: 'Be brief.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Hi' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
      ],
    },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
  ],
  temperature: 0.5,
  max_tokens: 10,
  stop: ['x'],
  tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
  tool_choice: 'auto',
  response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' } } },
  stream: false,
};

const validMessages = {
  model: 'claude',
  max_tokens: 64,
  system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Hi' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'hmm', signature: 'c2ln' },
        { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
  ],
  tools: [{ name: 'f', description: 'F', input_schema: { type: 'object', properties: { a: { type: 'number' } } } }],
  tool_choice: { type: 'auto' },
  thinking: { type: 'enabled', budget_tokens: 1024 },
  stop_sequences: ['x'],
  temperature: 0.5,
  metadata: { user_id: 'u1' },
  stream: false,
};

const validResponses = {
  model: 'fast',
  instructions: 'Be brief.',
  input: [
    { role: 'developer', content: 'Answer in English.' },
    {
      type: 'message',
      role: 'user',
      content: [
        { type: 'input_text', text: 'Hi' },
        { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'auto' },
      ],
    },
    { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'ok' },
  ],
  tools: [{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: false }],
  tool_choice: 'auto',
  text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' } } },
  reasoning: { effort: 'low' },
  max_output_tokens: 64,
  store: false,
  stream: false,
};

const strangeValues: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1e308,
  -1e308,
  0.5,
  Number.MAX_SAFE_INTEGER + 2,
  '',
  ' ',
  'x'.repeat(5000),
  '\u0000\u0001\u001f',
  '💥🔥'.repeat(50),
  '\ud800',
  [],
  [null],
  [[[[[]]]]],
  {},
  { __proto__: { polluted: true } },
  { constructor: { prototype: { polluted: true } } },
  { type: 'unknown' },
  { role: 'wizard', content: 'x' },
  'NaN',
  '[]',
  '{}',
];

function pick<T>(next: () => number, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)] as T;
}

function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Replaces the value at a random path of a valid body with a strange value, or deletes it. */
function mutateStructure(next: () => number, valid: Record<string, unknown>): string {
  const body = clone(valid);
  let target: Record<string, unknown> | unknown[] = body;
  for (let depth = 0; depth < 4; depth++) {
    const keys: (string | number)[] = Array.isArray(target) ? target.map((_, index) => index) : Object.keys(target);
    if (keys.length === 0) break;
    const key = pick(next, keys);
    const child = (target as Record<string | number, unknown>)[key];
    if (depth === 3 || typeof child !== 'object' || child === null || next() < 0.35) {
      if (next() < 0.2 && !Array.isArray(target)) delete (target as Record<string, unknown>)[key as string];
      else (target as Record<string | number, unknown>)[key] = pick(next, strangeValues);
      break;
    }
    target = child as Record<string, unknown>;
  }
  return JSON.stringify(body);
}

/** Breaks the JSON text itself: truncation, byte flips, garbage, deep nesting. */
function mutateText(next: () => number, valid: Record<string, unknown>): string {
  const text = JSON.stringify(valid);
  switch (Math.floor(next() * 7)) {
    case 0:
      return text.slice(0, Math.floor(next() * text.length));
    case 1: {
      const at = Math.floor(next() * text.length);
      return text.slice(0, at) + String.fromCharCode(Math.floor(next() * 128)) + text.slice(at + 1);
    }
    case 2:
      return Array.from({ length: 1 + Math.floor(next() * 64) }, () =>
        String.fromCharCode(Math.floor(next() * 0xffff)),
      ).join('');
    case 3:
      return '['.repeat(5000) + ']'.repeat(5000);
    case 4:
      return `{"model":"${String(valid.model)}","messages":${'['.repeat(2000)}${']'.repeat(2000)}}`;
    case 5:
      return JSON.stringify(pick(next, strangeValues));
    default:
      return text.replace(/"/g, next() < 0.5 ? "'" : '');
  }
}

/** Whether a response body is exactly OpenAI's error envelope. */
function isOpenAIEnvelope(value: unknown): boolean {
  const envelope = value as { error?: Record<string, unknown> } | undefined;
  const error = envelope?.error;
  return (
    error !== undefined &&
    Object.keys(envelope ?? {}).join() === 'error' &&
    Object.keys(error).sort().join() === 'code,message,param,type' &&
    typeof error.message === 'string' &&
    error.message.length > 0 &&
    typeof error.type === 'string' &&
    (error.param === null || typeof error.param === 'string')
  );
}

const anthropicErrorTypes = new Set([
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'timeout_error',
  'overloaded_error',
]);

/** Whether a response body is exactly Anthropic's error envelope. */
function isAnthropicEnvelope(value: unknown): boolean {
  const envelope = value as { type?: unknown; error?: Record<string, unknown> } | undefined;
  const error = envelope?.error;
  return (
    envelope?.type === 'error' &&
    error !== undefined &&
    Object.keys(envelope).sort().join() === 'error,type' &&
    Object.keys(error).sort().join() === 'message,type' &&
    typeof error.message === 'string' &&
    error.message.length > 0 &&
    anthropicErrorTypes.has(String(error.type))
  );
}

/** One client API under fuzz: its endpoints, a valid body to mutate, its credential header and its error envelope. */
interface FuzzedApi {
  name: string;
  paths: readonly string[];
  valid: Record<string, unknown>;
  headers: Record<string, string>;
  isEnvelope: (value: unknown) => boolean;
  cases: number;
  seed: number;
}

const fuzzedApis: FuzzedApi[] = [
  {
    name: 'OpenAI (chat completions, embeddings, legacy completions)',
    paths: ['/v1/chat/completions', '/v1/chat/completions', '/v1/embeddings', '/v1/completions'],
    valid: validChat,
    headers: { authorization: 'Bearer sk-fuzz-master-key' },
    isEnvelope: isOpenAIEnvelope,
    cases: 600,
    seed: 20261121,
  },
  {
    name: 'OpenAI Responses',
    paths: ['/v1/responses'],
    valid: validResponses,
    headers: { authorization: 'Bearer sk-fuzz-master-key' },
    isEnvelope: isOpenAIEnvelope,
    cases: 400,
    seed: 20261126,
  },
  {
    name: 'Anthropic (messages, count_tokens)',
    paths: ['/v1/messages', '/v1/messages', '/v1/messages/count_tokens'],
    valid: validMessages,
    headers: { 'x-api-key': 'sk-fuzz-master-key', 'anthropic-version': '2023-06-01' },
    isEnvelope: isAnthropicEnvelope,
    cases: 600,
    seed: 20261125,
  },
];

describe('fuzzing the client endpoints with malformed bodies', () => {
  let mock: MockUpstream;
  let gateway: ReturnType<typeof createGateway>;

  beforeAll(async () => {
    mock = await startMockUpstream();
    const deployment = (provider: string) => ({
      deployments: [{ provider, model: 'text', baseURL: `${mock.url}/v1`, apiKey: mockUpstreamApiKey }],
    });
    gateway = createGateway(
      {
        server: { bodyLimitBytes: 64 * 1024 },
        modelGroups: { fast: deployment('openai'), claude: deployment('anthropic') },
      },
      { masterKey: 'sk-fuzz-master-key', services: { logger: { info() {}, warn() {}, error() {} } } },
    );
  });

  afterAll(async () => {
    await mock?.close();
  });

  it.each(fuzzedApis)(
    'answers every malformed body to $name with a 4xx in its exact error envelope (seeded)',
    async (api) => {
      const next = seededRandom(api.seed);
      const failures: string[] = [];
      const statuses: Record<number, number> = {};
      for (let index = 0; index < api.cases; index++) {
        const path = pick(next, api.paths);
        const body = next() < 0.6 ? mutateStructure(next, api.valid) : mutateText(next, api.valid);
        // Half the mutated Messages and Responses bodies go to the other deployment: translated, not passed through.
        const routed =
          api.valid === validMessages && next() < 0.5
            ? body.replace('"model":"claude"', '"model":"fast"')
            : api.valid === validResponses && next() < 0.5
              ? body.replace('"model":"fast"', '"model":"claude"')
              : body;
        const response = await gateway.request(path, {
          method: 'POST',
          headers: {
            ...api.headers,
            'content-type': pick(next, ['application/json', 'text/plain', 'application/x-www-form-urlencoded']),
          },
          body: routed,
        });
        const text = await response.text();
        statuses[response.status] = (statuses[response.status] ?? 0) + 1;
        if (response.status === 200) continue; // the mutation happened to leave a valid request
        let envelope: unknown;
        try {
          envelope = JSON.parse(text);
        } catch {
          envelope = undefined;
        }
        const wellFormed = response.status >= 400 && response.status < 500 && api.isEnvelope(envelope);
        if (!wellFormed)
          failures.push(`#${index} ${path} ${response.status} body=${routed.slice(0, 120)} -> ${text.slice(0, 200)}`);
      }
      expect(failures).toEqual([]);
      // The corpus must really exercise rejection paths, not only valid requests.
      expect(
        Object.entries(statuses)
          .filter(([status]) => Number(status) >= 400)
          .reduce((sum, [, count]) => sum + count, 0),
      ).toBeGreaterThan(api.cases / 2);
    },
    120_000,
  );

  it('answers oversized bodies with 413 and unauthenticated ones with 401, before reading them', async () => {
    const large = JSON.stringify({ ...validChat, messages: [{ role: 'user', content: 'x'.repeat(100_000) }] });
    const tooLarge = await gateway.request('/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: 'Bearer sk-fuzz-master-key' },
      body: large,
    });
    expect(tooLarge.status).toBe(413);
    expect(((await tooLarge.json()) as { error: { code: string } }).error.code).toBe('request_too_large');
    const anonymous = await gateway.request('/v1/chat/completions', { method: 'POST', body: 'not json at all' });
    expect(anonymous.status).toBe(401);
    const wrongMethod = await gateway.request('/v1/chat/completions', {
      method: 'GET',
      headers: { authorization: 'Bearer sk-fuzz-master-key' },
    });
    expect(wrongMethod.status).toBe(405);
    const unknownPath = await gateway.request('/v1/nothing-here', {
      method: 'POST',
      headers: { authorization: 'Bearer sk-fuzz-master-key' },
    });
    expect(unknownPath.status).toBe(404);
    const anthropicUnknown = await gateway.request('/v1/messages/batches', {
      method: 'POST',
      headers: { 'x-api-key': 'sk-fuzz-master-key', 'anthropic-version': '2023-06-01' },
    });
    expect(anthropicUnknown.status).toBe(404);
    expect(isAnthropicEnvelope(await anthropicUnknown.json())).toBe(true);
    const anthropicAnonymous = await gateway.request('/v1/messages', { method: 'POST', body: '{}' });
    expect(anthropicAnonymous.status).toBe(401);
    expect(isAnthropicEnvelope(await anthropicAnonymous.json())).toBe(true);
    const anthropicWrongMethod = await gateway.request('/v1/messages', {
      method: 'GET',
      headers: { 'x-api-key': 'sk-fuzz-master-key' },
    });
    expect(anthropicWrongMethod.status).toBe(405);
    expect(isAnthropicEnvelope(await anthropicWrongMethod.json())).toBe(true);
    const anthropicTooLarge = await gateway.request('/v1/messages', {
      method: 'POST',
      headers: { 'x-api-key': 'sk-fuzz-master-key' },
      body: JSON.stringify({ ...validMessages, messages: [{ role: 'user', content: 'x'.repeat(100_000) }] }),
    });
    expect(anthropicTooLarge.status).toBe(413);
    expect(await anthropicTooLarge.json()).toMatchObject({ type: 'error', error: { type: 'request_too_large' } });
  });
});
