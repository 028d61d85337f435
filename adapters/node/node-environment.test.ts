import { describe, expect, it } from 'vitest';
import { nodeServerDefaults, readNodeServerSettings } from './node-environment.ts';

describe('readNodeServerSettings', () => {
  it('has defaults for every client timeout and watchdog', () => {
    expect(readNodeServerSettings({}, 4)).toEqual({
      port: 8787,
      hostname: undefined,
      workers: 4,
      shutdownGraceMs: 25_000,
      headersTimeoutMs: nodeServerDefaults.headersTimeoutMs,
      requestTimeoutMs: nodeServerDefaults.requestTimeoutMs,
      keepAliveTimeoutMs: nodeServerDefaults.keepAliveTimeoutMs,
      maxConnections: nodeServerDefaults.maxConnections,
      workerHeartbeatTimeoutMs: 10_000,
      workerStartTimeoutMs: 60_000,
      eventLoopStallTimeoutMs: 30_000,
    });
  });

  it('reads each setting from its variable', () => {
    const settings = readNodeServerSettings(
      {
        PORT: '0',
        HOST: '127.0.0.1',
        TORII_WORKERS: '1',
        TORII_HEADERS_TIMEOUT_MS: '1000',
        TORII_REQUEST_TIMEOUT_MS: '2000',
        TORII_KEEP_ALIVE_TIMEOUT_MS: '500',
        TORII_MAX_CONNECTIONS: '12',
        TORII_WORKER_HEARTBEAT_TIMEOUT_MS: '3000',
        TORII_WORKER_START_TIMEOUT_MS: '9000',
        TORII_EVENT_LOOP_STALL_TIMEOUT_MS: '0',
      },
      4,
    );
    expect(settings).toMatchObject({
      port: 0,
      hostname: '127.0.0.1',
      workers: 1,
      headersTimeoutMs: 1000,
      requestTimeoutMs: 2000,
      keepAliveTimeoutMs: 500,
      maxConnections: 12,
      workerHeartbeatTimeoutMs: 3000,
      workerStartTimeoutMs: 9000,
      eventLoopStallTimeoutMs: 0,
    });
  });

  it('names the variable of a bad value', () => {
    expect(() => readNodeServerSettings({ PORT: '70000' }, 1)).toThrow('PORT: must be an integer from 0 to 65535');
    expect(() => readNodeServerSettings({ PORT: '80a' }, 1)).toThrow(/^PORT: /);
    expect(() => readNodeServerSettings({ TORII_MAX_CONNECTIONS: '0' }, 1)).toThrow(/^TORII_MAX_CONNECTIONS: /);
    expect(() =>
      readNodeServerSettings({ TORII_HEADERS_TIMEOUT_MS: '5000', TORII_REQUEST_TIMEOUT_MS: '1000' }, 1),
    ).toThrow(/^TORII_REQUEST_TIMEOUT_MS: must be at least TORII_HEADERS_TIMEOUT_MS/);
    expect(() => readNodeServerSettings({ TORII_EVENT_LOOP_STALL_TIMEOUT_MS: '50' }, 1)).toThrow(
      /^TORII_EVENT_LOOP_STALL_TIMEOUT_MS: must be 0 \(off\) or at least 1000/,
    );
  });

  it('raises the default request timeout to a larger headers timeout', () => {
    expect(readNodeServerSettings({ TORII_HEADERS_TIMEOUT_MS: '200000' }, 1).requestTimeoutMs).toBe(200_000);
  });
});
