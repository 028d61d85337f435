import { describe, expect, it } from 'vitest';
import { createBufferedLineWriter } from './buffered-line-writer.ts';

/** Sinks that record what they are given; `written()` resolves at the next write (tests wait on it, not on time). */
function recordingSinks() {
  const writes = { stdout: [] as string[], stderr: [] as string[] };
  let wrote: (() => void) | undefined;
  const record = (name: 'stdout' | 'stderr') => (chunk: Uint8Array | string) => {
    writes[name].push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString());
    wrote?.();
  };
  return {
    writes,
    sinks: { stdout: { write: record('stdout') }, stderr: { write: record('stderr') } },
    written: () => new Promise<void>((resolve) => (wrote = resolve)),
  };
}

describe('the buffered line writer', () => {
  it('writes warnings and errors together at the end of the turn, info lines together a little later', async () => {
    const { writes, sinks, written } = recordingSinks();
    const writer = createBufferedLineWriter(sinks);
    const errorsWritten = written();
    writer.write('{"a":1}', 'info');
    writer.write('{"a":2}', 'debug');
    writer.write('{"b":1}', 'warn');
    writer.write('{"b":2}', 'error');
    expect(writes).toEqual({ stdout: [], stderr: [] });
    await errorsWritten;
    expect(writes).toEqual({ stdout: [], stderr: ['{"b":1}\n{"b":2}\n'] });
    await written();
    expect(writes).toEqual({ stdout: ['{"a":1}\n{"a":2}\n'], stderr: ['{"b":1}\n{"b":2}\n'] });
  });

  it('writes up to the bound it is given (a regular file takes larger writes)', () => {
    const { writes, sinks } = recordingSinks();
    const writer = createBufferedLineWriter(sinks, 50, { stdout: 65_536, stderr: 4096 });
    const line = 'x'.repeat(999);
    for (let index = 0; index < 100; index++) writer.write(line, 'info');
    writer.flush();
    expect(writes.stdout.map((text) => text.length)).toEqual([65_000, 35_000]);
  });

  it('never writes more than 4 KiB at once unless one line is longer, and splits only between lines', async () => {
    const { writes, sinks } = recordingSinks();
    const writer = createBufferedLineWriter(sinks);
    const line = 'x'.repeat(999);
    for (let index = 0; index < 10; index++) writer.write(line, 'info');
    writer.write('y'.repeat(5000), 'info');
    writer.flush();
    expect(writes.stdout.join('')).toBe(`${line}\n`.repeat(10) + `${'y'.repeat(5000)}\n`);
    for (const text of writes.stdout.slice(0, -1)) expect(Buffer.byteLength(text)).toBeLessThanOrEqual(4096);
    for (const text of writes.stdout) expect(text.endsWith('\n')).toBe(true);
  });

  it('writes what is buffered when flushed (the exit path)', () => {
    const { writes, sinks } = recordingSinks();
    const writer = createBufferedLineWriter(sinks);
    writer.write('{"last":true}', 'error');
    writer.flush();
    expect(writes.stderr).toEqual(['{"last":true}\n']);
  });

  it('counts bytes, not characters, at the bound, and never changes a chunk it handed over', () => {
    const kept: Uint8Array[] = [];
    const sink = { write: (chunk: Uint8Array | string) => void kept.push(chunk as Uint8Array) };
    const writer = createBufferedLineWriter({ stdout: sink, stderr: sink }, 50, { stdout: 100, stderr: 100 });
    const line = 'é'.repeat(30); // 60 bytes, 30 characters
    writer.write(line, 'info');
    writer.write(line, 'info'); // 61 + 61 bytes do not fit in 100
    writer.write('x'.repeat(10), 'info');
    writer.flush();
    const texts = kept.map((chunk) => Buffer.from(chunk).toString());
    expect(texts).toEqual([`${line}\n`, `${line}\n${'x'.repeat(10)}\n`]);
    for (const chunk of kept) expect(chunk.byteLength).toBeLessThanOrEqual(100);
  });
});
