import type { PrometheusFamily } from './prometheus-families.ts';

/** The content type of the Prometheus text exposition format 0.0.4. */
export const prometheusContentType = 'text/plain; version=0.0.4; charset=utf-8';

function escapeText(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

function formatLabels(labels: Record<string, string | number>): string {
  let text = '';
  for (const [name, value] of Object.entries(labels)) {
    const escaped = typeof value === 'string' ? escapeText(value).replace(/"/g, '\\"') : String(value);
    text += `${text === '' ? '' : ','}${name}="${escaped}"`;
  }
  return text === '' ? '' : `{${text}}`;
}

/**
 * The Prometheus text exposition (format 0.0.4) of metric families, written without prom-client so that runtimes
 * without it (Deno; any Fetch-based host of the library) serve the same `/metrics` as Node: `# HELP`, `# TYPE`, then
 * one line per value, families separated by a blank line, the same text prom-client's `Registry.metrics()` writes for
 * the same families (adapters/node/prometheus-families.test.ts holds it to that).
 *
 * @example
 * const body = renderPrometheusText(metrics.families);
 * return new Response(body, { headers: { 'content-type': prometheusContentType } });
 */
export function renderPrometheusText(families: readonly PrometheusFamily[]): string {
  const blocks: string[] = [];
  for (const family of families) {
    const metric = family.get();
    const name = escapeText(metric.name);
    const lines = [`# HELP ${name} ${escapeText(metric.help)}`, `# TYPE ${name} ${metric.type}`];
    for (const value of metric.values)
      lines.push(`${value.metricName ?? name}${formatLabels(value.labels)} ${formatValue(value.value)}`);
    blocks.push(lines.join('\n'));
  }
  return `${blocks.join('\n\n')}\n`;
}
