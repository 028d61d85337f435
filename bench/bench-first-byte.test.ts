import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureFirstByte } from './bench-first-byte.ts';

/** A server that answers every request with a first byte after `delayMs` (0: at once), then ends. */
function server(delayMs: number): Promise<{ server: Server; url: string; requests: () => number }> {
  let requests = 0;
  const created = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      requests++;
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const write = () => response.end('data: {}\n\n');
      if (delayMs === 0) write();
      else setTimeout(write, delayMs);
    });
  });
  return new Promise((resolve) =>
    created.listen(0, '127.0.0.1', () =>
      resolve({
        server: created,
        url: `http://127.0.0.1:${(created.address() as AddressInfo).port}/v1/chat/completions`,
        requests: () => requests,
      }),
    ),
  );
}

describe('measureFirstByte', () => {
  let slow: Awaited<ReturnType<typeof server>>;
  let fast: Awaited<ReturnType<typeof server>>;

  beforeAll(async () => {
    [slow, fast] = await Promise.all([server(8), server(0)]);
  });

  afterAll(() => {
    slow.server.close();
    fast.server.close();
  });

  it('measures a target step by step beside its base: the per-step differences are the target minus the base', async () => {
    const body = Buffer.from('{"model":"m"}');
    const result = await measureFirstByte({ url: slow.url, baseUrl: fast.url, body, requests: 40, warmUp: 4 });
    expect(result).toMatchObject({ requests: 40, errors: 0 });
    expect(slow.requests()).toBe(44);
    expect(fast.requests()).toBe(44);
    // The target waits at least 8 ms before its first byte, the base none.
    expect(result.firstByteMs.p50).toBeGreaterThanOrEqual(8);
    expect(result.paired!.baseFirstByteMs.p50).toBeLessThan(result.firstByteMs.p50);
    expect(result.paired!.firstByteDifferenceMs.p50).toBeGreaterThan(4);
    const unpaired = await measureFirstByte({ url: fast.url, body, requests: 10, warmUp: 0 });
    expect(unpaired.paired).toBeUndefined();
    expect(unpaired.requests).toBe(10);
  });

  it('counts a step whose target or base failed as an error, not as a time', async () => {
    const body = Buffer.from('{}');
    const result = await measureFirstByte({
      url: fast.url,
      baseUrl: 'http://127.0.0.1:9/v1/chat/completions',
      body,
      requests: 5,
      warmUp: 0,
    });
    expect(result).toMatchObject({ requests: 0, errors: 5 });
  });
});
