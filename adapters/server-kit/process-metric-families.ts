import process from 'node:process';
import { createObservedFamily, type PrometheusFamily } from '../../src/observability/prometheus-families.ts';

/**
 * A standalone server process's own metrics (Deno, Bun: read through their `node:process`), read when `/metrics` is
 * scraped, under the standard Prometheus process names (the ones prom-client's defaults give a Node process, so
 * dashboards serve all three): `process_cpu_user_seconds_total`, `process_cpu_system_seconds_total`,
 * `process_cpu_seconds_total`, `process_resident_memory_bytes`, `process_heap_bytes` (the engine's heap size) and
 * `process_start_time_seconds`; plus `<runtime>_heap_used_bytes` and `<runtime>_external_memory_bytes`.
 *
 * @example
 * const families = [...metrics.families, ...serverProcessFamilies('deno')];
 */
export function serverProcessFamilies(runtime: 'deno' | 'bun'): PrometheusFamily[] {
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
    gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', () => process.memoryUsage().rss),
    gauge('process_heap_bytes', "Process heap size in bytes (the engine's).", () => process.memoryUsage().heapTotal),
    gauge(`${runtime}_heap_used_bytes`, 'Engine heap in use, in bytes.', () => process.memoryUsage().heapUsed),
    gauge(
      `${runtime}_external_memory_bytes`,
      'Memory outside the engine heap bound to JavaScript objects, in bytes.',
      () => {
        return process.memoryUsage().external;
      },
    ),
  ];
}
