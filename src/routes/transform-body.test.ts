import { afterEach, describe, expect, it, vi } from 'vitest';
import { isUpstreamLimitError } from '../upstream/upstream-limit-error.ts';
import {
  createDeferredEnd,
  createStreamPump,
  pumpedStream,
  transformBody,
  type DeferredEnd,
} from './transform-body.ts';

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

  describe('timers', () => {
    afterEach(() => {
      vi.restoreAllMocks();
    });

    it('arms no timer for a stream whose bytes are all there when it is read (the final event and the end included)', async () => {
      const armed = vi.spyOn(globalThis, 'setTimeout');
      const source = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(encoder.encode('a END'));
          controller.enqueue(encoder.encode(' trailing'));
          controller.close();
        },
      });
      const terminating: Transformer<Uint8Array, Uint8Array> = {
        transform(chunk, controller) {
          controller.enqueue(chunk);
          if (decoder.decode(chunk).includes('END')) controller.terminate();
        },
      };
      const text = await new Response(transformBody(source, terminating, { idleTimeoutMs: 60_000 })).text();
      expect(text).toBe('a END');
      // The rest of the upstream is read in the background (releaseUpstream): let it finish.
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(armed).not.toHaveBeenCalled();
    });

    it('arms the idle timer once for a stream that waits on every read, not once per chunk', async () => {
      const armed = vi.spyOn(globalThis, 'setTimeout');
      let sent = 0;
      const source = new ReadableStream<Uint8Array>(
        {
          async pull(controller) {
            await new Promise<void>((resolve) => setImmediate(resolve));
            if (sent === 5) controller.close();
            else controller.enqueue(encoder.encode(String(sent++)));
          },
        },
        { highWaterMark: 0 },
      );
      const text = await new Response(transformBody(source, upperCase(), { idleTimeoutMs: 60_000 })).text();
      expect(text).toBe('01234|END');
      expect(armed.mock.calls.filter(([, delay]) => delay === 60_000)).toHaveLength(1);
    });
  });

  describe('a transformer that terminates (the final event came)', () => {
    /** Ends the client's stream at `END`, like a relay at the dialect's final event; the rest is not its concern. */
    function untilEnd(): Transformer<Uint8Array, Uint8Array> & { cancel?: (reason: unknown) => void } {
      return {
        transform(chunk, controller) {
          const text = decoder.decode(chunk);
          const end = text.indexOf('END');
          controller.enqueue(encoder.encode(end === -1 ? text : text.slice(0, end + 3)));
          if (end !== -1) controller.terminate();
        },
        flush(controller) {
          controller.enqueue(encoder.encode('|FLUSHED'));
        },
      };
    }

    /** An upstream that sends `first` (with the final event), then what `after` does on each later read. */
    function upstream(first: string, after: (controller: ReadableStreamDefaultController<Uint8Array>) => void) {
      const seen = { reads: 0, cancelled: false, closed: false };
      let cancelled: () => void = () => undefined;
      const whenCancelled = new Promise<void>((resolve) => (cancelled = resolve));
      let drained: () => void = () => undefined;
      const whenDrained = new Promise<void>((resolve) => (drained = resolve));
      const stream = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            seen.reads++;
            if (seen.reads === 1) return controller.enqueue(encoder.encode(first));
            after(controller);
            if (seen.closed) drained();
          },
          cancel() {
            seen.cancelled = true;
            cancelled();
          },
        },
        { highWaterMark: 0 },
      );
      return { stream, seen, whenCancelled, whenDrained, close: () => (seen.closed = true) };
    }

    it('ends the client stream at once and reads the rest of an upstream that closes, keeping its connection', async () => {
      const source = upstream('a END', (controller) => {
        controller.enqueue(encoder.encode(' trailing bytes'));
        source.close();
        controller.close();
      });
      const text = await new Response(transformBody(source.stream, untilEnd(), { idleTimeoutMs: 60_000 })).text();
      // Nothing after the final event, not even the flush: the stream ended with the transformer's last output.
      expect(text).toBe('a END');
      await source.whenDrained;
      expect(source.seen.cancelled).toBe(false);
    });

    it('cancels an upstream that stays open after the final event, within the idle timeout', async () => {
      const source = upstream('a END', () => undefined /* nothing, ever */);
      const text = await new Response(transformBody(source.stream, untilEnd(), { idleTimeoutMs: 50 })).text();
      expect(text).toBe('a END');
      await source.whenCancelled;
      expect(source.seen.cancelled).toBe(true);
    });

    it('cancels an upstream that keeps sending after the final event, after 64 KiB', async () => {
      const source = upstream('a END', (controller) => controller.enqueue(new Uint8Array(16 * 1024)));
      const text = await new Response(transformBody(source.stream, untilEnd(), { idleTimeoutMs: 60_000 })).text();
      expect(text).toBe('a END');
      await source.whenCancelled;
      expect(source.seen.reads).toBeGreaterThan(4);
      expect(source.seen.reads).toBeLessThan(10);
    });
  });
});

describe('createStreamPump end work', () => {
  /** An upstream that sends `text` and then stays open. */
  const heldOpen = (text: string): ReadableStream<Uint8Array> =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode(text));
      },
    });

  /** A transformer that ends the stream (and reports its end) with the chunk carrying `!`. */
  function endingAtBang(
    ending: DeferredEnd,
    ended: string[],
  ): Transformer<Uint8Array, Uint8Array> & {
    cancel?: (reason: unknown) => void;
  } {
    let done = false;
    const end = (why: string): void => {
      if (done) return;
      done = true;
      ending.defer(() => ended.push(why));
    };
    return {
      transform(chunk, controller) {
        const text = decoder.decode(chunk);
        controller.enqueue(chunk);
        if (text.includes('!')) {
          end('final event');
          controller.terminate();
        }
      },
      cancel: () => end('cancelled'),
    };
  }

  it('holds the end work of a step until the consumer says the step is delivered', async () => {
    const ending = createDeferredEnd();
    const ended: string[] = [];
    const source = heldOpen('whole answer!');
    const pump = createStreamPump(source.getReader(), endingAtBang(ending, ended), { ending });
    const step = await pump.pull();
    expect(step.done).toBe(true);
    expect(decoder.decode(step.value)).toBe('whole answer!');
    expect(ended).toEqual([]);
    pump.delivered();
    expect(ended).toEqual(['final event']);
    pump.delivered();
    expect(ended).toEqual(['final event']);
  });

  it('runs the end work when the client goes away before the end', async () => {
    const ending = createDeferredEnd();
    const ended: string[] = [];
    const source = heldOpen('partial');
    const pump = createStreamPump(source.getReader(), endingAtBang(ending, ended), { ending });
    expect((await pump.pull()).done).toBe(false);
    await pump.cancel(new Error('client left'));
    expect(ended).toEqual(['cancelled']);
  });

  it('runs it for a ReadableStream consumer as each pull hands its chunk on', async () => {
    const ending = createDeferredEnd();
    const ended: string[] = [];
    const source = heldOpen('whole answer!');
    const body = pumpedStream(createStreamPump(source.getReader(), endingAtBang(ending, ended), { ending }));
    expect(await new Response(body).text()).toBe('whole answer!');
    expect(ended).toEqual(['final event']);
  });
});
