import { describe, expect, it } from 'vitest';
import { percentile, parseFirstByteOutput, summarize } from './bench-first-byte.ts';
import { parseHeyOutput } from './bench-hey.ts';

const heyOutput = `
Summary:
  Total:	10.0086 secs
  Slowest:	0.0331 secs
  Fastest:	0.0002 secs
  Average:	0.0006 secs
  Requests/sec:	999.1437

  Total data:	450072 bytes
  Size/request:	1128 bytes

Response time histogram:
  0.000 [1]	|
  0.004 [9369]	|■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■

Latency distribution:
  10% in 0.0003 secs
  25% in 0.0004 secs
  50% in 0.0005 secs
  75% in 0.0006 secs
  90% in 0.0008 secs
  95% in 0.0010 secs
  99% in 0.0021 secs

Details (average, fastest, slowest):
  DNS+dialup:	0.0000 secs, 0.0006 secs, 0.0331 secs
  resp read:	0.0001 secs, 0.0000 secs, 0.0005 secs

Status code distribution:
  [200]	9990 responses
  [429]	2 responses

Error distribution:
  [3]	Post "http://127.0.0.1:4555/v1/chat/completions": EOF
`;

describe('parseHeyOutput', () => {
  it('reads rps, p50 and p99 in ms, and counts non-2xx answers and errors', () => {
    const result = parseHeyOutput(heyOutput);
    expect(result.requestsPerSecond).toBeCloseTo(999.1437, 4);
    expect(result.p50Ms).toBeCloseTo(0.5, 9);
    expect(result.p99Ms).toBeCloseTo(2.1, 9);
    expect(result.requests).toBe(9_992);
    expect(result.errors).toBe(5);
  });

  it('throws when hey measured nothing', () => {
    expect(() => parseHeyOutput('Summary:\n  Requests/sec:\t199.1\n\nLatency distribution:\n\n')).toThrow(
      /no latency distribution/,
    );
  });
});

describe('the first-byte client', () => {
  it('takes nearest-rank percentiles', () => {
    const values = Array.from({ length: 100 }, (_, index) => 100 - index);
    expect(percentile(values, 0.5)).toBe(50);
    expect(percentile(values, 0.99)).toBe(99);
    expect(percentile([], 0.5)).toBe(0);
    expect(summarize([1, 2, 3])).toEqual({ p50: 2, p99: 3, mean: 2 });
  });

  it('parses its result line', () => {
    const line =
      'FIRST_BYTE_RESULT {"requests":2,"errors":0,"seconds":0.1,"firstByteMs":{"p50":0.4,"p99":0.9,"mean":0.5},' +
      '"totalMs":{"p50":0.5,"p99":1,"mean":0.6}}';
    expect(parseFirstByteOutput(`noise\n${line}\n`).firstByteMs.p99).toBe(0.9);
    expect(() => parseFirstByteOutput('crashed')).toThrow(/no result/);
  });
});
