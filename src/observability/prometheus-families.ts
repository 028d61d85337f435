/**
 * Metric families that record into plain numbers on the request path and build prom-client's metric objects only
 * when scraped. prom-client's own Counter and Histogram hash their label objects on every `inc`/`observe`, even
 * through label children; these families resolve a label set to a series once and then only add numbers.
 *
 * Each family has the shape prom-client's Registry expects of a metric (`name`, `help`, `type`, `aggregator`,
 * `get()`), so it registers in an ordinary Registry: the exposition text, `getMetricsAsJSON()` and the cluster
 * AggregatorRegistry all work unchanged.
 */

/** One value line as prom-client's `getMetricsAsJSON()` gives it. */
export interface PrometheusValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** A metric as prom-client's `getMetricsAsJSON()` gives it. */
export interface PrometheusMetricObject {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  aggregator: 'sum';
  values: PrometheusValue[];
}

/** What a family shares with prom-client's metrics: enough for `Registry.registerMetric`. */
export interface PrometheusFamily extends Omit<PrometheusMetricObject, 'values'> {
  get(): PrometheusMetricObject;
  reset(): void;
}

/** One labelled counter series. */
export interface CounterSeries {
  inc(amount?: number): void;
}

/** One labelled histogram series. */
export interface HistogramSeries {
  observe(value: number): void;
}

/** A counter family: `series(labels)` once per label set, then `inc` on the series. */
export interface CounterFamily extends PrometheusFamily {
  series(labels: Record<string, string>): CounterSeries;
}

/** A gauge without labels. */
export interface GaugeFamily extends PrometheusFamily {
  inc(): void;
  dec(): void;
}

/** A gauge with labels, set per label set (e.g. a deployment's circuit). */
export interface LabelledGaugeFamily extends PrometheusFamily {
  set(labels: Record<string, string>, value: number): void;
}

/** A histogram family: `series(labels)` once per label set, then `observe` on the series. */
export interface HistogramFamily extends PrometheusFamily {
  series(labels: Record<string, string>): HistogramSeries;
}

interface FamilyDefinition {
  name: string;
  help: string;
}

function seriesKey(labels: Record<string, string>): string {
  let key = '';
  for (const name of Object.keys(labels).sort()) key += `${name}\u0000${labels[name]}\u0000`;
  return key;
}

/**
 * A counter family.
 *
 * @example
 * const requests = createCounterFamily({ name: 'torii_requests_total', help: 'Requests served.' });
 * const served = requests.series({ status_class: '2xx' });
 * served.inc();
 */
export function createCounterFamily(definition: FamilyDefinition): CounterFamily {
  const series = new Map<string, { labels: Record<string, string>; value: number }>();
  return {
    ...definition,
    type: 'counter',
    aggregator: 'sum',
    series(labels) {
      const key = seriesKey(labels);
      let found = series.get(key);
      if (found === undefined) {
        found = { labels: { ...labels }, value: 0 };
        series.set(key, found);
      }
      const counted = found;
      return {
        inc(amount = 1) {
          counted.value += amount;
        },
      };
    },
    get() {
      const values = [...series.values()].map(({ labels, value }) => ({ labels: { ...labels }, value }));
      return { ...definition, type: 'counter', aggregator: 'sum', values };
    },
    reset() {
      for (const entry of series.values()) entry.value = 0;
    },
  };
}

/**
 * A gauge with labels, each label set holding its last value.
 *
 * @example
 * const open = createLabelledGaugeFamily({ name: 'torii_deployment_circuit_open', help: 'Circuits open.' });
 * open.set({ deployment: 'gpt/0' }, 1);
 */
export function createLabelledGaugeFamily(definition: FamilyDefinition): LabelledGaugeFamily {
  const series = new Map<string, { labels: Record<string, string>; value: number }>();
  return {
    ...definition,
    type: 'gauge',
    aggregator: 'sum',
    set(labels, value) {
      const key = seriesKey(labels);
      const found = series.get(key);
      if (found === undefined) series.set(key, { labels: { ...labels }, value });
      else found.value = value;
    },
    get() {
      const values = [...series.values()].map(({ labels, value }) => ({ labels: { ...labels }, value }));
      return { ...definition, type: 'gauge', aggregator: 'sum', values };
    },
    reset() {
      series.clear();
    },
  };
}

/**
 * A gauge without labels (e.g. requests in flight).
 *
 * @example
 * const inFlight = createGaugeFamily({ name: 'torii_requests_in_flight', help: 'Requests being served now.' });
 * inFlight.inc();
 */
export function createGaugeFamily(definition: FamilyDefinition): GaugeFamily {
  let value = 0;
  return {
    ...definition,
    type: 'gauge',
    aggregator: 'sum',
    inc() {
      value++;
    },
    dec() {
      value--;
    },
    get() {
      return { ...definition, type: 'gauge', aggregator: 'sum', values: [{ labels: {}, value }] };
    },
    reset() {
      value = 0;
    },
  };
}

interface HistogramData {
  labels: Record<string, string>;
  /** Observations per bucket, not cumulative; the last slot counts those above the highest bound. */
  counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * A histogram family with fixed upper bounds (seconds, ascending), rendered like prom-client's Histogram:
 * cumulative `_bucket` lines with `le`, then `+Inf`, `_sum` and `_count`.
 *
 * @example
 * const latency = createHistogramFamily({ name: 'torii_request_duration_seconds', help: '...', buckets: [0.1, 1] });
 * latency.series({ operation: 'chat' }).observe(0.042);
 */
export function createHistogramFamily(definition: FamilyDefinition & { buckets: readonly number[] }): HistogramFamily {
  const { name, help } = definition;
  const bounds = [...definition.buckets].sort((left, right) => left - right);
  const series = new Map<string, HistogramData>();
  return {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    series(labels) {
      const key = seriesKey(labels);
      let found = series.get(key);
      if (found === undefined) {
        found = { labels: { ...labels }, counts: new Float64Array(bounds.length + 1), sum: 0, count: 0 };
        series.set(key, found);
      }
      const data = found;
      return {
        observe(value) {
          if (!Number.isFinite(value)) return;
          let index = 0;
          while (index < bounds.length && value > bounds[index]!) index++;
          data.counts[index]!++;
          data.sum += value;
          data.count++;
        },
      };
    },
    get() {
      const values: PrometheusValue[] = [];
      for (const data of series.values()) {
        let cumulative = 0;
        for (let index = 0; index < bounds.length; index++) {
          cumulative += data.counts[index]!;
          values.push({
            labels: { le: bounds[index]!, ...data.labels },
            value: cumulative,
            metricName: `${name}_bucket`,
          });
        }
        values.push(
          { labels: { le: '+Inf', ...data.labels }, value: data.count, metricName: `${name}_bucket` },
          { labels: { ...data.labels }, value: data.sum, metricName: `${name}_sum` },
          { labels: { ...data.labels }, value: data.count, metricName: `${name}_count` },
        );
      }
      return { name, help, type: 'histogram', aggregator: 'sum', values };
    },
    reset() {
      for (const data of series.values()) {
        data.counts.fill(0);
        data.sum = 0;
        data.count = 0;
      }
    },
  };
}

/**
 * A family without labels whose value is read when scraped, from counters kept elsewhere (the usage queue's
 * `stats()`, the cluster's worker counts): nothing is recorded on any request path.
 *
 * @example
 * const lost = createObservedFamily({ name: 'torii_usage_events_lost_total', help: '...', type: 'counter', read: () => queue.stats().dropped });
 */
export function createObservedFamily(
  definition: FamilyDefinition & { type: 'counter' | 'gauge'; read: () => number },
): PrometheusFamily {
  const { name, help, type, read } = definition;
  return {
    name,
    help,
    type,
    aggregator: 'sum',
    get() {
      return { name, help, type, aggregator: 'sum', values: [{ labels: {}, value: read() }] };
    },
    reset() {},
  };
}
