import { describe, expect, it } from 'vitest';
import { formatSoakSeries, soakVerdict, type SoakSample } from './bench-soak.ts';

const samples = (rss: number[]): SoakSample[] =>
  rss.map((rss_mb, index) => ({
    t_s: (index + 1) * 10,
    rss_mb,
    peak_rss_mb: rss_mb + 5,
    rps: 1_000,
    p50_ms: 0.5,
    p99_ms: 2,
    errors: 0,
  }));

describe('soakVerdict', () => {
  it('ignores the warm-up and compares the last third max with the first third max', () => {
    // Warm-up (t <= 60): 100..400 MB ignored; then 9 samples, thirds of 3.
    const verdict = soakVerdict(samples([100, 200, 300, 400, 400, 400, 200, 210, 205, 220, 215, 210, 225, 218, 219]));
    expect(verdict).toMatchObject({ verdict: 'flat', firstThirdMaxMb: 210, lastThirdMaxMb: 225, growthMb: 15 });
    expect(verdict.detail).toContain('allowed 20.0 MB (the smaller of 10% and 20 MB)');
  });

  it('calls growth beyond 10% or beyond 20 MB growing, and a decrease flat', () => {
    expect(soakVerdict(samples([0, 0, 0, 0, 0, 0, 100, 100, 100, 105, 111, 111])).verdict).toBe('growing');
    expect(soakVerdict(samples([0, 0, 0, 0, 0, 0, 500, 500, 500, 510, 521, 521])).verdict).toBe('growing');
    expect(soakVerdict(samples([0, 0, 0, 0, 0, 0, 500, 500, 500, 510, 519, 519])).verdict).toBe('flat');
    expect(soakVerdict(samples([0, 0, 0, 0, 0, 0, 300, 290, 280])).verdict).toBe('flat');
  });

  it('needs at least 3 samples after the warm-up', () => {
    expect(soakVerdict(samples([1, 2, 3, 4, 5, 6, 7, 8])).verdict).toBe('too short');
  });

  it('prints the series with the warm-up marked', () => {
    const lines = formatSoakSeries(samples([100, 200, 300, 400, 400, 400, 410])).split('\n');
    expect(lines).toHaveLength(9);
    expect(lines[2]).toMatch(/^10\s+w\s+100\.0/);
    expect(lines[8]).toMatch(/^70\s+410\.0/);
  });
});
