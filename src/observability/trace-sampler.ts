import type { TraceParent } from './trace-context.ts';

/** The samplers of OpenTelemetry's `OTEL_TRACES_SAMPLER`, with `ratio` for the two ratio-based ones. */
export interface TraceSamplerSettings {
  sampler:
    | 'always_on'
    | 'always_off'
    | 'traceidratio'
    | 'parentbased_always_on'
    | 'parentbased_always_off'
    | 'parentbased_traceidratio';
  /** `OTEL_TRACES_SAMPLER_ARG`: the share of root traces kept by the ratio samplers, 0 to 1. */
  ratio: number;
}

/** The sampler names `OTEL_TRACES_SAMPLER` takes. */
export const traceSamplerNames: readonly TraceSamplerSettings['sampler'][] = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
];

/** Decides whether a request's span is kept: from its trace id and the caller's `traceparent`, if it sent one. */
export type TraceSampler = (traceId: string, parent: TraceParent | undefined) => boolean;

/**
 * A sampler as OpenTelemetry's SDKs define it: `parentbased_*` follow the caller's sampled flag when a `traceparent`
 * came in; the ratio decision is a function of the trace id (its last 13 hex digits), so every service that samples
 * a trace at the same ratio keeps or drops it alike.
 *
 * @example
 * const sample = createTraceSampler({ sampler: 'parentbased_traceidratio', ratio: 0.1 });
 */
export function createTraceSampler(settings: TraceSamplerSettings): TraceSampler {
  const root = settings.sampler.replace('parentbased_', '');
  const parentBased = settings.sampler.startsWith('parentbased_');
  const bound = Math.max(0, Math.min(1, settings.ratio)) * 2 ** 52;
  const decideRoot = (traceId: string): boolean =>
    root === 'always_on' ? true : root === 'always_off' ? false : Number.parseInt(traceId.slice(-13), 16) < bound;
  return (traceId, parent) => (parentBased && parent !== undefined ? parent.sampled : decideRoot(traceId));
}
