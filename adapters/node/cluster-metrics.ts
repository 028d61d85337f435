import type { Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry, type RegistryContentType } from 'prom-client';

interface MetricsRequestMessage {
  type: 'torii:metrics-request';
  id: number;
}

interface MetricsResponseMessage {
  type: 'torii:metrics-response';
  id: number;
  contentType: string;
  body: string;
}

/**
 * Primary side of cluster metrics: answers a worker's request for the cluster-wide exposition by aggregating every
 * worker's registry with prom-client's AggregatorRegistry (counters and histograms summed, the in-flight gauge summed).
 */
export function serveClusterMetrics(worker: Worker, aggregator: AggregatorRegistry<RegistryContentType>): void {
  worker.on('message', (message: unknown) => {
    const request = message as Partial<MetricsRequestMessage> | null;
    if (request?.type !== 'torii:metrics-request' || typeof request.id !== 'number') return;
    const id = request.id;
    aggregator
      .clusterMetrics()
      .then(
        (body) =>
          ({
            type: 'torii:metrics-response',
            id,
            contentType: aggregator.contentType,
            body,
          }) satisfies MetricsResponseMessage,
      )
      .catch(
        (error: unknown) =>
          ({
            type: 'torii:metrics-response',
            id,
            contentType: 'text/plain',
            body: `# aggregation failed: ${String(error)}\n`,
          }) satisfies MetricsResponseMessage,
      )
      .then((response) => {
        if (worker.isConnected()) worker.send(response);
      });
  });
}

/**
 * Worker side: registers this worker's registry for aggregation and returns the `/metrics` exposition function,
 * which asks the primary for the aggregated text over IPC, so any worker can answer `/metrics` on the shared port.
 */
export function createWorkerMetricsExposition(
  registry: Registry,
): () => Promise<{ contentType: string; body: string }> {
  AggregatorRegistry.setRegistries([registry]);
  // prom-client only answers the primary's collection requests once an AggregatorRegistry exists in this process.
  new AggregatorRegistry();
  let nextId = 0;
  const pending = new Map<number, (response: MetricsResponseMessage) => void>();
  process.on('message', (message: unknown) => {
    const response = message as Partial<MetricsResponseMessage> | null;
    if (response?.type !== 'torii:metrics-response' || typeof response.id !== 'number') return;
    pending.get(response.id)?.(response as MetricsResponseMessage);
    pending.delete(response.id);
  });
  return () =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error('The cluster primary did not answer the metrics request in time.'));
      }, 5_000);
      pending.set(id, (response) => {
        clearTimeout(timer);
        resolve({ contentType: response.contentType, body: response.body });
      });
      process.send?.({ type: 'torii:metrics-request', id } satisfies MetricsRequestMessage);
    });
}
