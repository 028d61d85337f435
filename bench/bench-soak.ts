import { formatColumns } from './bench-tables.ts';

/**
 * The verdict of `pnpm bench:soak`: does one shape's RSS stay flat under a steady load? Pure functions, no I/O
 * (`bench-soak.test.ts`).
 */

/** One sample of the soak, taken at the end of each 10 s slice of load. */
export interface SoakSample {
  /** Seconds since the load started. */
  t_s: number;
  /** The process tree's current RSS (VmRSS summed), MB. */
  rss_mb: number;
  /** The tree's peak RSS (VmHWM summed) during the slice, MB. */
  peak_rss_mb: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
}

/** The rule: after the warm-up, the last third's highest RSS against the first third's. */
export interface SoakRule {
  warmUpSeconds: number;
  /** Growth allowed, as a share of the first third's max. */
  maximumGrowthRatio: number;
  /** Growth allowed, in MB. Both limits apply. */
  maximumGrowthMb: number;
}

/** The default rule: 60 s of warm-up; growth within 10% and within 20 MB. */
export const defaultSoakRule: SoakRule = { warmUpSeconds: 60, maximumGrowthRatio: 0.1, maximumGrowthMb: 20 };

/** The verdict and the numbers it was taken on. */
export interface SoakVerdict {
  verdict: 'flat' | 'growing' | 'too short';
  firstThirdMaxMb: number | null;
  lastThirdMaxMb: number | null;
  growthMb: number | null;
  detail: string;
}

/**
 * Judges the samples: those taken after `warmUpSeconds` are split into three equal runs by count (the middle one gets
 * what does not divide); the RSS is flat when the last third's highest sample exceeds the first third's highest by at
 * most `maximumGrowthRatio` of it and at most `maximumGrowthMb` (a decrease is flat). Fewer than three samples after
 * the warm-up is `too short`.
 *
 * @example
 * soakVerdict(samples).verdict; // 'flat'
 */
export function soakVerdict(samples: readonly SoakSample[], rule: SoakRule = defaultSoakRule): SoakVerdict {
  const measured = samples.filter((sample) => sample.t_s > rule.warmUpSeconds);
  if (measured.length < 3) {
    return {
      verdict: 'too short',
      firstThirdMaxMb: null,
      lastThirdMaxMb: null,
      growthMb: null,
      detail: `${measured.length} samples after the ${rule.warmUpSeconds} s warm-up; at least 3 are needed`,
    };
  }
  const third = Math.floor(measured.length / 3);
  const first = Math.max(...measured.slice(0, third).map((sample) => sample.rss_mb));
  const last = Math.max(...measured.slice(measured.length - third).map((sample) => sample.rss_mb));
  const growth = last - first;
  const allowed = Math.min(rule.maximumGrowthRatio * first, rule.maximumGrowthMb);
  const flat = growth <= allowed;
  return {
    verdict: flat ? 'flat' : 'growing',
    firstThirdMaxMb: first,
    lastThirdMaxMb: last,
    growthMb: growth,
    detail:
      `last third max ${last.toFixed(1)} MB vs first third max ${first.toFixed(1)} MB ` +
      `(${third} samples each, after ${rule.warmUpSeconds} s): ${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MB, ` +
      `allowed ${allowed.toFixed(1)} MB (the smaller of ${rule.maximumGrowthRatio * 100}% and ${rule.maximumGrowthMb} MB)`,
  };
}

/** The series as a table, one line per sample; samples in the warm-up are marked `w`. */
export function formatSoakSeries(samples: readonly SoakSample[], rule: SoakRule = defaultSoakRule): string {
  return formatColumns(
    ['t_s', '', 'rss_mb', 'peak_rss_mb', 'rps', 'p50_ms', 'p99_ms', 'errors'],
    samples.map((sample) => [
      sample.t_s.toFixed(0),
      sample.t_s <= rule.warmUpSeconds ? 'w' : '',
      sample.rss_mb.toFixed(1),
      sample.peak_rss_mb.toFixed(1),
      sample.rps.toFixed(0),
      sample.p50_ms.toFixed(3),
      sample.p99_ms.toFixed(3),
      String(sample.errors),
    ]),
    2,
  );
}
