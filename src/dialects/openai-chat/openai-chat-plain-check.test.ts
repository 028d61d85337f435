import { seededRandom } from '../../../tests/support/seeded-random.ts';
import { describe, expect, it } from 'vitest';
import { isPlainOpenAIChatRequest } from './openai-chat-plain-check.ts';
import { openAIChatRequestSchema } from './openai-chat-request-schema.ts';

const plainBody = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hello', name: 'ada' },
    { role: 'assistant', content: 'Hi.' },
    { role: 'developer', content: 'Answer in French.' },
    { role: 'user', content: 'Bonjour ?' },
  ],
  stream: true,
  stream_options: { include_usage: true },
  max_tokens: 64,
  temperature: 0.7,
  top_p: 1,
  n: 1,
  seed: 42,
  user: 'user-1',
  presence_penalty: 0,
  frequency_penalty: -0.5,
  logprobs: false,
  top_logprobs: 0,
  parallel_tool_calls: true,
  reasoning_effort: 'low',
  metadata: { anything: ['goes'] },
};

const strangeValues: unknown[] = [
  undefined,
  null,
  true,
  false,
  0,
  -0,
  -1,
  1,
  2,
  2.5,
  128,
  129,
  20,
  21,
  0.5,
  -2,
  -2.01,
  1e308,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 2,
  Number.MIN_SAFE_INTEGER - 2,
  '',
  'x',
  'low',
  'xhigh',
  'auto',
  [],
  [''],
  ['a', 'b'],
  {},
  { include_usage: true },
  { include_usage: 'yes' },
  { role: 'user', content: 'x' },
];

const topLevelKeys = [...Object.keys(plainBody), 'stop', 'logit_bias', 'tools', 'tool_choice', 'response_format'];
const messageKeys = ['role', 'content', 'name', 'tool_calls', 'refusal', 'tool_call_id', 'extra'];
const roles = ['system', 'developer', 'user', 'assistant', 'tool', 'function', 'robot', '', 7];

function pick<T>(next: () => number, values: readonly T[]): T {
  return values[Math.floor(next() * values.length)]!;
}

function mutate(seed: number): Record<string, unknown> {
  const next = seededRandom(seed);
  const body: Record<string, unknown> = structuredClone(plainBody);
  const edits = 1 + Math.floor(next() * 3);
  for (let edit = 0; edit < edits; edit++) {
    const messages = (Array.isArray(body.messages) ? (body.messages as unknown[]) : []).filter(
      (message): message is Record<string, unknown> => typeof message === 'object' && message !== null,
    );
    switch (Math.floor(next() * 6)) {
      case 0:
        body[pick(next, topLevelKeys)] = pick(next, strangeValues);
        break;
      case 1:
        delete body[pick(next, topLevelKeys)];
        break;
      case 2:
        if (messages.length > 0) pick(next, messages)[pick(next, messageKeys)] = pick(next, strangeValues);
        break;
      case 3:
        if (messages.length > 0) pick(next, messages).role = pick(next, roles);
        break;
      case 4:
        if (messages.length > 0) delete pick(next, messages)[pick(next, messageKeys)];
        break;
      default:
        body.messages = next() < 0.5 ? [] : pick(next, strangeValues);
    }
  }
  return body;
}

describe('isPlainOpenAIChatRequest', () => {
  it('accepts the plain text requests SDKs send, which the schema accepts too', () => {
    expect(openAIChatRequestSchema.safeParse(plainBody).success).toBe(true);
    expect(isPlainOpenAIChatRequest(plainBody)).toBe(true);
    expect(isPlainOpenAIChatRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })).toBe(true);
  });

  it('leaves nested fields and non-text messages to the schema', () => {
    const withTools = { ...plainBody, tools: [{ type: 'function', function: { name: 'f' } }] };
    expect(isPlainOpenAIChatRequest(withTools)).toBe(false);
    const withParts = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
    expect(isPlainOpenAIChatRequest(withParts)).toBe(false);
    const withToolResult = { model: 'm', messages: [{ role: 'tool', content: 'ok', tool_call_id: 'c' }] };
    expect(isPlainOpenAIChatRequest(withToolResult)).toBe(false);
  });

  it('never vouches for a body the schema rejects (differential, 20,000 seeded mutations)', () => {
    let vouched = 0;
    let rejectedBySchema = 0;
    for (let seed = 1; seed <= 20_000; seed++) {
      const body = mutate(seed);
      const schemaAccepts = openAIChatRequestSchema.safeParse(body).success;
      if (!schemaAccepts) rejectedBySchema++;
      if (isPlainOpenAIChatRequest(body)) {
        vouched++;
        if (!schemaAccepts) expect.fail(`seed ${seed}: vouched for ${JSON.stringify(body)}`);
      }
    }
    // The corpus exercises both sides: many bodies the schema rejects, many the check vouches for.
    expect(rejectedBySchema).toBeGreaterThan(5_000);
    expect(vouched).toBeGreaterThan(2_000);
  });
});
