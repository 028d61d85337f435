import { afterEach, describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../errors.ts';
import { noSecretRedactor } from '../security/secret-redactor.ts';
import type { ChunkReader } from '../services.ts';
import { readerAfterFirstChunk } from './stream-first-chunk.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

/** A reader over a script of reads: each entry answers one read (a promise the test settles, or a value). */
function scriptedReader(reads: Array<Promise<ReadableStreamReadResult<Uint8Array>>>): ChunkReader & {
  cancelled: unknown[];
} {
  const cancelled: unknown[] = [];
  return {
    cancelled,
    read: () => reads.shift() ?? Promise.resolve({ done: true, value: undefined }),
    cancel: async (reason) => {
      cancelled.push(reason);
    },
  };
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('readerAfterFirstChunk', () => {
  it('takes a first chunk that is already there without setting the idle timer, and yields it first', async () => {
    const setTimer = vi.spyOn(globalThis, 'setTimeout');
    const reader = scriptedReader([
      Promise.resolve({ done: false, value: bytes('data: 1\n\n') }),
      Promise.resolve({ done: false, value: bytes('data: 2\n\n') }),
    ]);
    const after = await readerAfterFirstChunk(reader, 5_000, 'openai', noSecretRedactor);
    expect(setTimer).not.toHaveBeenCalled();
    expect(new TextDecoder().decode((await after.read()).value)).toBe('data: 1\n\n');
    expect(new TextDecoder().decode((await after.read()).value)).toBe('data: 2\n\n');
    expect((await after.read()).done).toBe(true);
  });

  it('waits for a first chunk that comes later, and clears its timer once it came', async () => {
    vi.useFakeTimers();
    let deliver!: (result: ReadableStreamReadResult<Uint8Array>) => void;
    const reader = scriptedReader([new Promise((resolve) => (deliver = resolve))]);
    const after = readerAfterFirstChunk(reader, 5_000, 'openai', noSecretRedactor);
    await vi.advanceTimersByTimeAsync(4_000);
    expect(vi.getTimerCount()).toBe(1);
    deliver({ done: false, value: bytes('data: late\n\n') });
    const first = await (await after).read();
    expect(new TextDecoder().decode(first.value)).toBe('data: late\n\n');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('fails as a retryable upstream timeout when nothing comes within the idle time, and cancels the read', async () => {
    vi.useFakeTimers();
    const reader = scriptedReader([new Promise(() => {})]);
    const after = readerAfterFirstChunk(reader, 5_000, 'openai', noSecretRedactor);
    const failure = after.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(5_000);
    const error = (await failure) as GatewayError;
    expect(error).toBeInstanceOf(GatewayError);
    expect(error.status).toBe(504);
    expect(error.retryable).toBe(true);
    expect(reader.cancelled).toHaveLength(1);
  });

  it('fails as a retryable interruption when the stream ends before its first bytes', async () => {
    const reader = scriptedReader([Promise.resolve({ done: true, value: undefined })]);
    const error = (await readerAfterFirstChunk(reader, 5_000, 'openai', noSecretRedactor).catch(
      (caught: unknown) => caught,
    )) as GatewayError;
    expect(error.code).toBe('upstream_stream_interrupted');
    expect(error.retryable).toBe(true);
  });

  it('fails as an upstream error, redacted, when the first read breaks at once', async () => {
    const reader = scriptedReader([Promise.reject(new Error('socket hang up near sk-secret-1'))]);
    const redactor = { redact: (text: string) => text.replaceAll('sk-secret-1', '[redacted]') };
    const error = (await readerAfterFirstChunk(reader, 5_000, 'openai', redactor).catch(
      (caught: unknown) => caught,
    )) as GatewayError;
    expect(error).toBeInstanceOf(GatewayError);
    expect(error.status).toBe(502);
    expect(error.message).not.toContain('sk-secret-1');
    expect(reader.cancelled).toHaveLength(1);
  });
});
