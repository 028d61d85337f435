import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  createCounterFamily,
  createGaugeFamily,
  createHistogramFamily,
  type PrometheusFamily,
} from '../../src/observability/prometheus-families.ts';
import { prometheusContentType, renderPrometheusText } from '../../src/observability/prometheus-text.ts';

const buckets = [0.001, 0.01, 0.1, 1];
const observations = [0.0005, 0.001, 0.002, 0.05, 0.1, 0.5, 3, 0.0001, 7];

/** The same series recorded by prom-client's own classes, as the reference. */
function referenceRegistry(): Registry {
  const registry = new Registry();
  const counter = new Counter({
    name: 'test_requests_total',
    help: 'Requests.',
    labelNames: ['group', 'status'] as const,
    registers: [registry],
  });
  const histogram = new Histogram({
    name: 'test_duration_seconds',
    help: 'Duration.',
    labelNames: ['group'] as const,
    buckets,
    registers: [registry],
  });
  const gauge = new Gauge({ name: 'test_in_flight', help: 'In flight.', registers: [registry] });
  counter.inc({ group: 'a', status: '2xx' });
  counter.inc({ group: 'a', status: '2xx' }, 4);
  counter.inc({ group: 'b', status: '5xx' });
  for (const value of observations) histogram.observe({ group: 'a' }, value);
  histogram.observe({ group: 'b' }, 0.02);
  gauge.inc();
  gauge.inc();
  gauge.dec();
  return registry;
}

function familyRegistry(): Registry {
  const registry = new Registry();
  for (const family of recordedFamilies()) registry.registerMetric(family as unknown as Metric);
  return registry;
}

function recordedFamilies(): PrometheusFamily[] {
  const counter = createCounterFamily({ name: 'test_requests_total', help: 'Requests.' });
  const histogram = createHistogramFamily({ name: 'test_duration_seconds', help: 'Duration.', buckets });
  const gauge = createGaugeFamily({ name: 'test_in_flight', help: 'In flight.' });
  const served = counter.series({ group: 'a', status: '2xx' });
  served.inc();
  served.inc(4);
  counter.series({ group: 'b', status: '5xx' }).inc();
  const durationA = histogram.series({ group: 'a' });
  for (const value of observations) durationA.observe(value);
  histogram.series({ group: 'b' }).observe(0.02);
  gauge.inc();
  gauge.inc();
  gauge.dec();
  return [counter, histogram, gauge];
}

describe('prometheus families', () => {
  it('render the same exposition text as prom-client Counter, Histogram and Gauge', async () => {
    expect(await familyRegistry().metrics()).toBe(await referenceRegistry().metrics());
  });

  it('render the same text without prom-client (Deno, Workers), with the same content type', async () => {
    expect(renderPrometheusText(recordedFamilies())).toBe(await referenceRegistry().metrics());
    expect(prometheusContentType).toBe(Registry.PROMETHEUS_CONTENT_TYPE);
  });

  it('escape help and label values as prom-client does', async () => {
    const reference = new Registry();
    const counter = new Counter({
      name: 'escaped_total',
      help: 'Back\\slash and\nnewline.',
      labelNames: ['value'] as const,
      registers: [reference],
    });
    counter.inc({ value: 'a "quoted" \\ value\nnext' });
    const family = createCounterFamily({ name: 'escaped_total', help: 'Back\\slash and\nnewline.' });
    family.series({ value: 'a "quoted" \\ value\nnext' }).inc();
    expect(renderPrometheusText([family])).toBe(await reference.metrics());
  });

  it('aggregate across registries like prom-client metrics do (cluster mode)', async () => {
    const fromFamilies = AggregatorRegistry.aggregate([
      await familyRegistry().getMetricsAsJSON(),
      await familyRegistry().getMetricsAsJSON(),
    ]);
    const fromReference = AggregatorRegistry.aggregate([
      await referenceRegistry().getMetricsAsJSON(),
      await referenceRegistry().getMetricsAsJSON(),
    ]);
    const text = await fromFamilies.metrics();
    expect(text).toBe(await fromReference.metrics());
    expect(text).toContain('test_requests_total{group="a",status="2xx"} 10');
    expect(text).toContain('test_duration_seconds_bucket{le="0.01",group="a"} 8');
    expect(text).toContain('test_in_flight 2');
  });

  it('one series handle per label set, whatever the label order', () => {
    const counter = createCounterFamily({ name: 'c_total', help: 'c' });
    counter.series({ x: '1', y: '2' }).inc();
    counter.series({ y: '2', x: '1' }).inc(2);
    expect(counter.get().values).toEqual([{ labels: { x: '1', y: '2' }, value: 3 }]);
  });

  it('ignores observations that are not finite numbers, as prom-client refuses them', () => {
    const histogram = createHistogramFamily({ name: 'h_seconds', help: 'h', buckets: [1] });
    const series = histogram.series({});
    series.observe(Number.NaN);
    series.observe(Number.POSITIVE_INFINITY);
    series.observe(0.5);
    const count = histogram.get().values.find((value) => value.metricName === 'h_seconds_count');
    expect(count?.value).toBe(1);
  });

  it('reset zeroes every series and keeps them listed', () => {
    const histogram = createHistogramFamily({ name: 'r_seconds', help: 'r', buckets: [1] });
    histogram.series({ a: 'x' }).observe(0.5);
    histogram.reset();
    expect(histogram.get().values.every((value) => value.value === 0)).toBe(true);
  });
});
