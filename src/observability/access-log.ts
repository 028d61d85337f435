import { consoleLineWriter, isoTime, type LogLineWriter } from './json-logger.ts';
import { defaultLogLevel, logLevelEnabled, type LogLevel } from './log-level.ts';
import type { RequestObservation } from './request-observation.ts';

/** Writes the access line of one finished request. */
export type AccessLog = (observation: RequestObservation) => void;

/** What {@link createAccessLog} is made from. */
export interface AccessLogOptions {
  /** The gateway's log level; the access line is an `info` line, so `warn`, `error` and `silent` turn it off. */
  level?: LogLevel;
  /** Where lines go (default {@link consoleLineWriter}). */
  write?: LogLineWriter;
  /** The wall clock, epoch ms (default `Date.now`). */
  clock?: () => number;
}

/** Milliseconds to the microsecond: enough for any reader, and short in the line. */
function milliseconds(value: number | undefined): number | undefined {
  return value === undefined ? undefined : Math.round(value * 1000) / 1000;
}

/**
 * The access line of a request, as one JSON object: the log line's `time`, `level` (`info`) and `message`
 * (`request`), then the request's ids, who called (`keyId`: `master` or the virtual key's id, and the key's visible
 * `keyPrefix`, never the key), what was asked and what served it, the status, the times in ms and the accounted tokens
 * and cost. Fields that do not apply (no deployment before routing, no time to first token without a stream) are left
 * out. It holds no prompt or response content, and nothing a client can make long: the client's `x-request-id` is
 * kept only when it is a short token (request-record.ts), model groups and deployments come from the config.
 *
 * @example
 * accessLine(observation, Date.now());
 * // {"time":"...","level":"info","message":"request","requestId":"...","status":200,"latencyMs":12.5,...}
 */
export function accessLine(observation: RequestObservation, time: number): string {
  return JSON.stringify({
    time: isoTime(time),
    level: 'info',
    message: 'request',
    requestId: observation.requestId,
    clientRequestId: observation.clientRequestId ?? undefined,
    keyId: observation.keyId,
    keyPrefix: observation.keyPrefix,
    clientApi: observation.clientApi,
    operation: observation.operation,
    stream: observation.stream,
    modelGroup: observation.modelGroup,
    servedModelGroup:
      observation.servedModelGroup === observation.modelGroup ? undefined : observation.servedModelGroup,
    provider: observation.provider,
    deployment: observation.deployment,
    upstreamModel: observation.upstreamModel,
    attempts: observation.attempts === 0 ? undefined : observation.attempts,
    status: observation.status,
    latencyMs: milliseconds(observation.durationMs),
    upstreamMs: milliseconds(observation.upstreamMs),
    overheadMs: milliseconds(observation.overheadMs),
    timeToFirstTokenMs: milliseconds(observation.timeToFirstTokenMs),
    inputTokens: observation.inputTokens,
    outputTokens: observation.outputTokens,
    cachedInputTokens: observation.cachedInputTokens,
    reasoningTokens: observation.reasoningTokens,
    usageSource: observation.usageSource,
    costUsd: observation.costUsd,
  });
}

/**
 * The access log: one `info` line per finished request (see {@link accessLine}), written after the response ended
 * (a stream: after its last byte). Undefined when the level leaves `info` lines out, so the request path does not
 * even call it. One `JSON.stringify` and one write per request.
 *
 * @example
 * const accessLog = createAccessLog({ level: 'info' });
 * const gateway = createGateway({ ..., services: { accessLog } });
 */
export function createAccessLog(options: AccessLogOptions = {}): AccessLog | undefined {
  if (!logLevelEnabled(options.level ?? defaultLogLevel, 'info')) return undefined;
  const write = options.write ?? consoleLineWriter;
  const clock = options.clock ?? Date.now;
  return (observation) => write(accessLine(observation, clock()), 'info');
}
