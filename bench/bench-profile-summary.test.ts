import { describe, expect, it } from 'vitest';
import { areaOf, formatProfileSummary, summarizeProfile, type CpuProfile } from './bench-profile-summary.ts';

describe('areaOf', () => {
  it('names torii folders, packages, node internals and V8', () => {
    expect(areaOf('src/routes/handle-model-request.ts', 'handle')).toBe('torii src/routes');
    expect(areaOf('providers/openai-compatible/openai-compatible-request.ts', 'build')).toBe(
      'torii providers/openai-compatible',
    );
    expect(areaOf('adapters/node/server.ts', 'main')).toBe('torii adapters/node');
    expect(areaOf('file:///r/node_modules/.pnpm/undici@7/node_modules/undici/lib/core/util.js', 'parse')).toBe(
      'pkg undici',
    );
    expect(areaOf('file:///r/node_modules/.pnpm/x/node_modules/@hono/node-server/dist/index.mjs', 'f')).toBe(
      'pkg @hono/node-server',
    );
    expect(areaOf('node:internal/streams/readable', 'read')).toBe('node:internal/streams');
    expect(areaOf('node:_http_server', 'emit')).toBe('node:_http_server');
    expect(areaOf('', 'writev')).toBe('(native/V8 builtins)');
    expect(areaOf('', '(garbage collector)')).toBe('(garbage collector)');
  });
});

describe('summarizeProfile', () => {
  // root -> a (src) -> b (undici); samples: a, b, b, idle; each charged the delta to the next sample.
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1, columnNumber: -1 } },
      {
        id: 2,
        callFrame: { functionName: 'handle', url: 'file:///r/src/routes/a.ts', lineNumber: 9, columnNumber: 0 },
      },
      {
        id: 3,
        callFrame: {
          functionName: 'parse',
          url: 'file:///r/node_modules/undici/lib/util.js',
          lineNumber: 4,
          columnNumber: 2,
        },
      },
      { id: 4, callFrame: { functionName: '(idle)', url: '', lineNumber: -1, columnNumber: -1 } },
    ],
    samples: [2, 3, 3, 4, 2],
    timeDeltas: [0, 100, 300, 200, 400],
  };

  it('charges each sample the time to the next, and leaves idle out of the busy time', () => {
    const summary = summarizeProfile(profile);
    expect(summary.sampledMicroseconds).toBe(1_000);
    expect(summary.busyMicroseconds).toBe(600);
    expect(summary.areas).toEqual([
      { name: 'pkg undici', microseconds: 500 },
      { name: 'torii src/routes', microseconds: 100 },
    ]);
    expect(summary.functions[0]).toEqual({ name: 'parse undici/lib/util.js:5', microseconds: 500 });
  });

  it('maps bundled positions to their sources when a mapper knows them', () => {
    const summary = summarizeProfile(profile, (url, line) =>
      url.endsWith('a.ts') ? { file: 'file:///r/src/dialects/d.ts', line: line + 100 } : undefined,
    );
    expect(summary.areas.map((area) => area.name)).toContain('torii src/dialects');
    expect(summary.functions.map((entry) => entry.name)).toContain('handle src/dialects/d.ts:109');
  });

  it('formats shares of the busy time and microseconds per request', () => {
    const text = formatProfileSummary(summarizeProfile(profile), { requests: 10 });
    expect(text).toContain('60.0 us per request (10 requests)');
    expect(text).toContain(' 83.3%   50.00 us/req  pkg undici');
  });
});
