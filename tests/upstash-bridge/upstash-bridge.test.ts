import { randomUUID } from 'node:crypto';
import { Redis } from '@upstash/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUpstashBridge, type UpstashBridge } from './upstash-bridge.ts';

const base64 = (text: string) => Buffer.from(text).toString('base64');

describe('the Upstash REST bridge (real Redis behind)', () => {
  let bridge: UpstashBridge;
  const prefix = `test:bridge:${randomUUID()}:`;

  beforeAll(async () => {
    const redisUrl = process.env.TORII_TEST_REDIS_URL;
    if (!redisUrl)
      throw new Error('TORII_TEST_REDIS_URL is not set: the bridge needs a real Redis (see tests/services/).');
    bridge = await startUpstashBridge({ redisUrl, token: 'secret-token' });
  });

  afterAll(async () => {
    await bridge?.close();
  });

  async function call(path: string, body: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${bridge.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bridge.token}`, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  }

  it('answers 401 without the right bearer token', async () => {
    for (const authorization of [undefined, 'Bearer wrong', 'secret-token', 'Basic secret-token']) {
      const response = await fetch(`${bridge.url}/`, {
        method: 'POST',
        headers: authorization === undefined ? {} : { authorization },
        body: JSON.stringify(['PING']),
      });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ error: 'Unauthorized' });
    }
  });

  it('runs one command from a JSON array, with plain or base64-encoded results', async () => {
    const key = `${prefix}single`;
    expect(await call('/', ['SET', key, 'héllo', 'EX', 60])).toEqual({ status: 200, body: { result: 'OK' } });
    expect(await call('/', ['GET', key])).toEqual({ status: 200, body: { result: 'héllo' } });
    expect(await call('/', ['GET', key], { 'Upstash-Encoding': 'base64' })).toEqual({
      status: 200,
      body: { result: base64('héllo') },
    });
    expect(await call('/', ['SET', key, 'x'], { 'Upstash-Encoding': 'base64' })).toEqual({
      status: 200,
      body: { result: 'OK' },
    });
    expect(await call('/', ['PING'], { 'Upstash-Encoding': 'base64' })).toEqual({
      status: 200,
      body: { result: base64('PONG') },
    });
    expect(await call('/', ['GET', `${prefix}missing`], { 'Upstash-Encoding': 'base64' })).toEqual({
      status: 200,
      body: { result: null },
    });
    expect(await call('/', ['INCRBY', `${prefix}counter`, 5])).toEqual({ status: 200, body: { result: 5 } });
    await call('/', ['RPUSH', `${prefix}list`, 'a', 'b']);
    expect(await call('/', ['LRANGE', `${prefix}list`, 0, -1], { 'Upstash-Encoding': 'base64' })).toEqual({
      status: 200,
      body: { result: [base64('a'), base64('b')] },
    });
  });

  it('answers 400 with the Redis error, unencoded', async () => {
    expect(await call('/', ['INCR', `${prefix}list`], { 'Upstash-Encoding': 'base64' })).toEqual({
      status: 400,
      body: { error: expect.stringMatching(/^WRONGTYPE/) },
    });
    expect(await call('/', ['NOSUCHCOMMAND'])).toEqual({
      status: 400,
      body: { error: expect.stringMatching(/unknown command/) },
    });
    expect(await call('/', 'not json')).toEqual({ status: 400, body: { error: expect.any(String) } });
    expect(await call('/', ['SUBSCRIBE', 'channel'])).toEqual({
      status: 400,
      body: { error: 'ERR command is not allowed: SUBSCRIBE' },
    });
  });

  it('runs a pipeline, one result or error per command, in order', async () => {
    const key = `${prefix}pipeline`;
    expect(
      await call(
        '/pipeline',
        [
          ['SET', key, '1'],
          ['INCR', key],
          ['HGET', key, 'field'],
          ['GET', key],
        ],
        {
          'Upstash-Encoding': 'base64',
        },
      ),
    ).toEqual({
      status: 200,
      body: [{ result: 'OK' }, { result: 2 }, { error: expect.stringMatching(/^WRONGTYPE/) }, { result: base64('2') }],
    });
  });

  it('runs multi-exec atomically, and aborts the whole transaction when a command is refused', async () => {
    const key = `${prefix}transaction`;
    expect(
      await call('/multi-exec', [
        ['SET', key, '10'],
        ['INCRBY', key, 5],
        ['GET', key],
      ]),
    ).toEqual({
      status: 200,
      body: [{ result: 'OK' }, { result: 15 }, { result: '15' }],
    });
    const aborted = await call('/multi-exec', [
      ['SET', key, 'changed'],
      ['INCRBY', key],
    ]);
    expect(aborted).toEqual({ status: 400, body: { error: expect.stringMatching(/^EXECABORT/) } });
    expect(await call('/', ['GET', key])).toEqual({ status: 200, body: { result: '15' } });
    // A command that fails while running does not undo the others (Redis transactions do not roll back).
    expect(
      await call('/multi-exec', [
        ['SET', key, 'text'],
        ['INCR', key],
      ]),
    ).toEqual({
      status: 200,
      body: [{ result: 'OK' }, { error: expect.stringMatching(/not an integer/) }],
    });
  });

  it('keeps one transaction from seeing another request on the same bridge', async () => {
    const key = `${prefix}isolation`;
    await call('/', ['SET', key, 0]);
    const increments = Array.from({ length: 20 }, () =>
      call('/multi-exec', [
        ['INCR', key],
        ['INCR', key],
      ]).then((reply) => reply.body as { result: number }[]),
    );
    const results = await Promise.all(increments);
    // Each transaction's two increments are adjacent: the second is always the first plus one.
    for (const [first, second] of results) expect(second!.result).toBe(first!.result + 1);
    expect(await call('/', ['GET', key])).toEqual({ status: 200, body: { result: '40' } });
  });

  it('takes the command from the path, as Upstash documents for curl', async () => {
    const key = `${prefix}path`;
    const set = await fetch(`${bridge.url}/set/${encodeURIComponent(key)}?EX=60`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bridge.token}` },
      body: '{"a": 1}',
    });
    expect(await set.json()).toEqual({ result: 'OK' });
    const get = await fetch(`${bridge.url}/get/${encodeURIComponent(key)}?_token=${bridge.token}`);
    expect(await get.json()).toEqual({ result: '{"a": 1}' });
    expect(await call('/', ['TTL', key])).toEqual({ status: 200, body: { result: expect.any(Number) } });
  });

  it('serves the real @upstash/redis client: commands, pipelines, transactions, auto-pipelining', async () => {
    const redis = new Redis({ url: bridge.url, token: bridge.token, enableTelemetry: false });
    const key = `${prefix}client`;
    expect(await redis.set(key, { nested: ['value', 1] })).toBe('OK');
    expect(await redis.get(key)).toEqual({ nested: ['value', 1] });
    expect(await redis.ping()).toBe('PONG');
    expect(await redis.pipeline().set(`${key}:n`, 1).incr(`${key}:n`).get(`${key}:n`).exec()).toEqual(['OK', 2, 2]);
    expect(await redis.multi().incr(`${key}:n`).incr(`${key}:n`).exec()).toEqual([3, 4]);
    // Issued in one tick: auto-pipelined into one /pipeline call.
    expect(await Promise.all([redis.get(`${key}:n`), redis.exists(key), redis.type(key)])).toEqual([4, 1, 'string']);
    await expect(redis.hget(key, 'field')).rejects.toThrow(/WRONGTYPE/);
  });
});
