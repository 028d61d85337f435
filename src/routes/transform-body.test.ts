import { describe, expect, it } from 'vitest';
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

  it('ends with the rendered error event when the upstream read fails, and settles the transformer once', async () => {
    let cancelled = 0;
    const source = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error('socket hang up'));
      },
    });
    const transformer = { ...upperCase(), cancel: () => void cancelled++ };
    const text = await new Response(
      transformBody(source, transformer, (error) => encoder.encode(`ERR:${(error as Error).message}`)),
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
});
