/**
 * A local OpenTelemetry collector for tests: takes OTLP/HTTP JSON exports on `/v1/traces` (answering as a collector
 * does, or with `status` when a test wants failures), keeps every span with the headers it came with, and resolves
 * waits when a matching span arrives (tests wait on the export, not on the clock).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OtlpSpan } from '../../src/observability/otlp-span.ts';

/** A span as received, with the export's resource and headers. */
export interface ReceivedSpan {
  span: OtlpSpan;
  serviceName: string | undefined;
  headers: IncomingHttpHeaders;
}

/** A running collector. */
export interface OtlpCollector {
  /** `http://127.0.0.1:<port>`: the OTLP base (exports go to `/v1/traces`). */
  url: string;
  spans: ReceivedSpan[];
  /** Export requests received (each holds one batch). */
  exports(): number;
  /** The status the next exports get (200 by default). */
  answerWith(status: number): void;
  /** Resolves with the first span (received or yet to come) that `matches`. */
  waitForSpan(matches: (span: OtlpSpan) => boolean, timeoutMs?: number): Promise<ReceivedSpan>;
  close(): Promise<void>;
}

/** The value of one of a span's attributes (strings, numbers, booleans), undefined when absent. */
export function spanAttribute(span: OtlpSpan, key: string): string | number | boolean | undefined {
  const value = span.attributes.find((attribute) => attribute.key === key)?.value as
    { stringValue?: string; intValue?: string; doubleValue?: number; boolValue?: boolean } | undefined;
  if (value === undefined) return undefined;
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.doubleValue ?? value.boolValue;
}

/** Starts a collector on a free loopback port. */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: ReceivedSpan[] = [];
  const waiters = new Set<{ matches: (span: OtlpSpan) => boolean; resolve: (received: ReceivedSpan) => void }>();
  let status = 200;
  let exports = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      exports++;
      if (request.url !== '/v1/traces' || request.method !== 'POST') {
        response.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: {
          resource: { attributes: { key: string; value: { stringValue?: string } }[] };
          scopeSpans: { spans: OtlpSpan[] }[];
        }[];
      };
      for (const resourceSpans of body.resourceSpans) {
        const serviceName = resourceSpans.resource.attributes.find((item) => item.key === 'service.name')?.value
          .stringValue;
        for (const scope of resourceSpans.scopeSpans)
          for (const span of scope.spans) {
            const received = { span, serviceName, headers: request.headers };
            spans.push(received);
            for (const waiter of waiters)
              if (waiter.matches(span)) {
                waiters.delete(waiter);
                waiter.resolve(received);
              }
          }
      }
      response.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    exports: () => exports,
    answerWith(next) {
      status = next;
    },
    waitForSpan(matches, timeoutMs = 60_000) {
      const found = spans.find((received) => matches(received.span));
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = {
          matches,
          resolve: (received: ReceivedSpan) => {
            clearTimeout(timer);
            resolve(received);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no matching span within ${timeoutMs} ms (${spans.length} received)`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
