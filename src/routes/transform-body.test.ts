import { describe, expect, it } from 'vitest';
import { isUpstreamLimitError } from '../upstream/upstream-limit-error.ts';
import { transformBody } from './transform-body.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function upperCase(): Transformer<Uint8Array, Uint8Array> & { cancel?: (reason: unknown) => void } {
  return {
    transform(chunk, controller) {
      controller.enqueue(encoder.encode(decoder.decode(chunk).toUpperCase()));
    },
    flush(controller) {
      controller.enqueue(encoder.encode('|END'));
    },
  };
}

describe('transformBody', () => {
  it('transforms every chunk and flushes at the end', async () => {
    const source = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode('ab'));
        controller.enqueue(encoder.encode('cd'));
        controller.close();
      },
    });
    expect(await new Response(transformBody(source, upperCase())).text()).toBe('ABCD|END');
  });

  it('hands what one upstream read produced on as one chunk, in order', async () => {
    const source = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode('a|b|c'));
        controller.enqueue(encoder.encode('d'));
        controller.close();
      },
    });
    // One event out per `|`-separated part: three outputs from the first read, one from the second.
    const splitter: Transformer<Uint8Array, Uint8Array> = {
      transform(chunk, controller) {
        for (const part of decoder.decode(chunk).split('|')) controller.enqueue(encoder.encode(`[${part}]`));
      },
    };
    const reader = transformBody(source, splitter).getReader();
    const chunks: string[] = [];
    for (let result = await reader.read(); !result.done; result = await reader.read())
      chunks.push(decoder.decode(result.value));
    expect(chunks).toEqual(['[a][b][c]', '[d]']);
  });

  it('ends with the rendered error event when the upstream read fails, and settles the transformer once', async () => {
    let cancelled = 0;
    const source = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error('socket hang up'));
      },
    });
    const transformer = { ...upperCase(), cancel: () => void cancelled++ };
    const text = await new Response(
      transformBody(source, transformer, {
        renderSourceError: (error) => encoder.encode(`ERR:${(error as Error).message}`),
      }),
    ).text();
    expect(text).toBe('ERR:socket hang up');
    expect(cancelled).toBe(1);
  });

  it('cancels the upstream when the reader cancels', async () => {
    let upstreamCancelled = false;
    const source = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(encoder.encode('x'));
      },
      cancel() {
        upstreamCancelled = true;
      },
    });
    const reader = transformBody(source, upperCase()).getReader();
    await reader.read();
    await reader.cancel();
    expect(upstreamCancelled).toBe(true);
  });

  it('ends a stream whose upstream stays silent past the idle timeout with the error event, and cancels it', async () => {
    let upstreamCancelled: unknown;
    const source = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode('first'));
        // ...and then nothing, ever.
      },
      cancel(reason) {
        upstreamCancelled = reason;
      },
    });
    const failures: unknown[] = [];
    const transformer = { ...upperCase(), cancel: (reason: unknown) => void failures.push(reason) };
    const text = await new Response(
      transformBody(source, transformer, {
        idleTimeoutMs: 50,
        renderSourceError: (error) =>
          encoder.encode(`|ERR:${(error as Error).name}:${(error as { limit?: string }).limit}`),
      }),
    ).text();
    expect(text).toBe('FIRST|ERR:TimeoutError:idle-timeout');
    expect(failures).toHaveLength(1);
    expect(isUpstreamLimitError(upstreamCancelled)).toBe(true);
  });

  it('does not count time spent waiting for a slow client as upstream silence', async () => {
    let sent = 0;
    const source = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (sent === 5) controller.close();
          else controller.enqueue(encoder.encode(String(sent++)));
        },
      },
      { highWaterMark: 0 },
    );
    const reader = transformBody(source, upperCase(), {
      idleTimeoutMs: 40,
      renderSourceError: () => encoder.encode('ERR'),
    }).getReader();
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
      // The client takes far longer than the idle timeout between reads; the upstream answers each read at once.
      await new Promise((resolve) => setTimeout(resolve, 120));
    }
    expect(text).toBe('01234|END');
  });
});
