import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type {
  ClusterPrimaryMessage,
  ClusterPrimaryMessages,
  ClusterWorkerMessage,
  MetricJson,
} from './cluster-methods.ts';

/*
 * The metrics messages are declared with the others of the IPC channel in cluster-methods.ts. They are not an RPC
 * method: the collection round goes from the primary to its workers (the RPC only the other way), and every primary,
 * the one without a database included, serves them, with timeouts of their own (3 s a round, 10 s a request).
 */

/** The primary's side of cluster metrics. */
export interface ClusterMetricsCollector {
  /** Answers this worker's `/metrics` requests and takes its answers to collection rounds. */
  serve(worker: Worker): void;
  /** The cluster-wide exposition: every worker that answers in time, plus the primary's own registry. */
  collect(): Promise<{ contentType: string; body: string }>;
}

/**
 * Primary side of cluster metrics. prom-client's own `AggregatorRegistry.clusterMetrics()` fails the whole scrape when
 * one worker does not answer, which is exactly when metrics matter (a wedged worker); this collects every worker's
 * registry over the cluster IPC channel, waits at most `collectTimeoutMs` (default 3 s), and aggregates whoever
 * answered with the primary's own registry (worker restarts, heartbeat misses, the usage ledger's counters) through
 * prom-client's `AggregatorRegistry.aggregate` (counters and histograms summed). Workers that did not answer are
 * named in a comment line of the exposition.
 *
 * @example
 * const collector = createClusterMetricsCollector(primaryRegistry);
 * collector.serve(cluster.fork());
 */
export function createClusterMetricsCollector(
  primaryRegistry: Registry,
  options: { collectTimeoutMs?: number } = {},
): ClusterMetricsCollector {
  const collectTimeoutMs = options.collectTimeoutMs ?? 3_000;
  let nextId = 0;
  const rounds = new Map<number, (worker: Worker, metrics: MetricJson[]) => void>();

  const collect = async (): Promise<{ contentType: string; body: string }> => {
    const id = nextId++;
    const workers = Object.values(cluster.workers ?? {}).filter(
      (worker): worker is Worker => worker !== undefined && worker.isConnected(),
    );
    const answers = new Map<number, MetricJson[]>();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, collectTimeoutMs);
      rounds.set(id, (worker, metrics) => {
        answers.set(worker.id, metrics);
        if (answers.size === workers.length) {
          clearTimeout(timer);
          resolve();
        }
      });
      if (workers.length === 0) {
        clearTimeout(timer);
        resolve();
      }
      for (const worker of workers) {
        try {
          worker.send({ type: 'torii:metrics-collect', id } satisfies ClusterPrimaryMessage<'torii:metrics-collect'>);
        } catch {
          // The worker is going away; it counts as not answering.
        }
      }
    });
    rounds.delete(id);
    const registry = AggregatorRegistry.aggregate([...answers.values(), await primaryRegistry.getMetricsAsJSON()]);
    const silent = workers.filter((worker) => !answers.has(worker.id)).map((worker) => worker.process.pid);
    const note =
      silent.length === 0
        ? ''
        : `# torii: ${silent.length} of ${workers.length} workers did not answer within ${collectTimeoutMs} ms (pids ${silent.join(', ')}); their series are missing\n`;
    return { contentType: registry.contentType, body: note + (await registry.metrics()) };
  };

  return {
    collect,
    serve(worker) {
      worker.on('message', (message: unknown) => {
        const typed = message as { type?: string; id?: unknown; metrics?: unknown } | null;
        if (typed?.type === 'torii:metrics-collected' && typeof typed.id === 'number') {
          rounds.get(typed.id)?.(worker, Array.isArray(typed.metrics) ? (typed.metrics as MetricJson[]) : []);
          return;
        }
        if (typed?.type !== 'torii:metrics-request' || typeof typed.id !== 'number') return;
        const requestId = typed.id;
        collect()
          .then(
            ({ contentType, body }) =>
              ({
                type: 'torii:metrics-response',
                id: requestId,
                contentType,
                body,
              }) satisfies ClusterPrimaryMessage<'torii:metrics-response'>,
          )
          .catch(
            (error: unknown) =>
              ({
                type: 'torii:metrics-response',
                id: requestId,
                contentType: 'text/plain',
                body: `# aggregation failed: ${String(error)}\n`,
              }) satisfies ClusterPrimaryMessage<'torii:metrics-response'>,
          )
          .then((response) => {
            if (worker.isConnected()) worker.send(response);
          });
      });
    },
  };
}

/**
 * Worker side: answers the primary's collection rounds with this worker's registry, and returns the `/metrics`
 * exposition function, which asks the primary for the cluster-wide text over IPC, so any worker can answer `/metrics`
 * on the shared port.
 */
export function createWorkerMetricsExposition(
  registry: Registry,
): () => Promise<{ contentType: string; body: string }> {
  let nextId = 0;
  const pending = new Map<number, (response: ClusterPrimaryMessages['torii:metrics-response']) => void>();
  process.on('message', (message: unknown) => {
    const typed = message as
      | Partial<ClusterPrimaryMessage<'torii:metrics-response'>>
      | Partial<ClusterPrimaryMessage<'torii:metrics-collect'>>
      | null;
    if (typed?.type === 'torii:metrics-collect' && typeof typed.id === 'number') {
      const id = typed.id;
      void registry.getMetricsAsJSON().then((metrics) => {
        if (process.send !== undefined && process.connected)
          process.send({
            type: 'torii:metrics-collected',
            id,
            metrics,
          } satisfies ClusterWorkerMessage<'torii:metrics-collected'>);
      });
      return;
    }
    if (typed?.type !== 'torii:metrics-response' || typeof typed.id !== 'number') return;
    pending.get(typed.id)?.(typed as ClusterPrimaryMessages['torii:metrics-response']);
    pending.delete(typed.id);
  });
  return () =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error('The cluster primary did not answer the metrics request in time.'));
      }, 10_000);
      pending.set(id, (response) => {
        clearTimeout(timer);
        resolve({ contentType: response.contentType, body: response.body });
      });
      process.send?.({ type: 'torii:metrics-request', id } satisfies ClusterWorkerMessage<'torii:metrics-request'>);
    });
}
