import { AggregatorRegistry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { renderPrometheusText } from '../../src/observability/prometheus-text.ts';
import { createPrometheusMetrics } from './prometheus-metrics.ts';

describe('the Node metrics', () => {
  it('expose the gateway families as the Web-standard renderer does, beside the process metrics', async () => {
    const metrics = createPrometheusMetrics();
    const text = await metrics.registry.metrics();
    expect(text.startsWith(renderPrometheusText(metrics.families))).toBe(true);
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
  });

  it('leave the process metrics out when asked (a start-up probe)', async () => {
    const text = await createPrometheusMetrics({ processMetrics: false }).registry.metrics();
    expect(text).not.toMatch(/process_cpu_seconds_total/);
  });

  it('aggregate across cluster workers: process metrics summed or averaged, as the prom-client aggregators say', async () => {
    const workers = [createPrometheusMetrics(), createPrometheusMetrics()];
    const aggregated = AggregatorRegistry.aggregate(
      await Promise.all(workers.map((worker) => worker.registry.getMetricsAsJSON())),
    );
    const text = await aggregated.metrics();
    expect(text.match(/^nodejs_eventloop_lag_seconds /gm)).toHaveLength(1);
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(text).toMatch(/^torii_requests_in_flight 0$/m);
  });
});
