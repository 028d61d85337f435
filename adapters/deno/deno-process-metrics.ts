/// <reference lib="deno.ns" />
import process from 'node:process';
import { createObservedFamily, type PrometheusFamily } from '../../src/observability/prometheus-families.ts';

/**
 * The Deno process's own metrics, read when `/metrics` is scraped, under the standard Prometheus process names (the
 * ones prom-client's defaults give a Node process, so dashboards serve both): `process_cpu_user_seconds_total`,
 * `process_cpu_system_seconds_total`, `process_cpu_seconds_total`, `process_resident_memory_bytes`,
 * `process_heap_bytes` (V8's heap size) and `process_start_time_seconds`; plus V8's `deno_heap_used_bytes` and
 * `deno_external_memory_bytes`.
 *
 * @example
 * const families = [...metrics.families, ...denoProcessFamilies()];
 */
export function denoProcessFamilies(): PrometheusFamily[] {
  const startTimeSeconds = Math.round(performance.timeOrigin / 1000);
  const gauge = (name: string, help: string, read: () => number) =>
    createObservedFamily({ name, help, type: 'gauge', read });
  const counter = (name: string, help: string, read: () => number) =>
    createObservedFamily({ name, help, type: 'counter', read });
  return [
    counter(
      'process_cpu_user_seconds_total',
      'Total user CPU time spent in seconds.',
      () => process.cpuUsage().user / 1e6,
    ),
    counter(
      'process_cpu_system_seconds_total',
      'Total system CPU time spent in seconds.',
      () => process.cpuUsage().system / 1e6,
    ),
    counter('process_cpu_seconds_total', 'Total user and system CPU time spent in seconds.', () => {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1e6;
    }),
    gauge(
      'process_start_time_seconds',
      'Start time of the process since unix epoch in seconds.',
      () => startTimeSeconds,
    ),
    gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', () => Deno.memoryUsage().rss),
    gauge('process_heap_bytes', 'Process heap size in bytes (V8).', () => Deno.memoryUsage().heapTotal),
    gauge('deno_heap_used_bytes', 'V8 heap in use, in bytes.', () => Deno.memoryUsage().heapUsed),
    gauge('deno_external_memory_bytes', 'Memory of objects outside V8 bound to JavaScript ones, in bytes.', () => {
      return Deno.memoryUsage().external;
    }),
  ];
}
