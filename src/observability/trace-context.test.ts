import { describe, expect, it } from 'vitest';
import { parseTraceParent, randomHex } from './trace-context.ts';
import { createTraceSampler } from './trace-sampler.ts';

describe('parseTraceParent', () => {
  it('reads a W3C traceparent, and nothing else', () => {
    expect(parseTraceParent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      sampled: true,
    });
    expect(parseTraceParent('00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-00')?.sampled).toBe(false);
    for (const bad of [
      null,
      undefined,
      '',
      '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
      '00-xyz92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      'x'.repeat(10_000),
    ])
      expect(parseTraceParent(bad)).toBeUndefined();
  });

  it('makes random ids of the right length', () => {
    expect(randomHex(16)).toMatch(/^[0-9a-f]{32}$/);
    expect(randomHex(8)).toMatch(/^[0-9a-f]{16}$/);
    expect(randomHex(16)).not.toBe(randomHex(16));
  });
});

describe('createTraceSampler', () => {
  const parent = (sampled: boolean) => ({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), sampled });

  it('follows the caller under parentbased_*, decides roots by the sampler', () => {
    const on = createTraceSampler({ sampler: 'parentbased_always_on', ratio: 1 });
    expect(on(randomHex(16), undefined)).toBe(true);
    expect(on(randomHex(16), parent(false))).toBe(false);
    const off = createTraceSampler({ sampler: 'always_off', ratio: 1 });
    expect(off(randomHex(16), parent(true))).toBe(false);
  });

  it('keeps about the ratio of root traces, the same decision for the same trace id', () => {
    const tenth = createTraceSampler({ sampler: 'traceidratio', ratio: 0.1 });
    let kept = 0;
    for (let index = 0; index < 20_000; index++) if (tenth(randomHex(16), undefined)) kept++;
    expect(kept).toBeGreaterThan(1_600);
    expect(kept).toBeLessThan(2_400);
    const id = randomHex(16);
    expect(tenth(id, undefined)).toBe(tenth(id, undefined));
    expect(createTraceSampler({ sampler: 'traceidratio', ratio: 0 })(id, undefined)).toBe(false);
    expect(createTraceSampler({ sampler: 'traceidratio', ratio: 1 })(id, undefined)).toBe(true);
  });
});
