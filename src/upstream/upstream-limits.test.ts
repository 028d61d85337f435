import { describe, expect, it } from 'vitest';
import { defaultUpstreamLimits, resolveUpstreamLimits } from './upstream-limits.ts';

describe('resolveUpstreamLimits', () => {
  it("takes a deployment's own timeouts over the server's, and the server's over the defaults", () => {
    expect(resolveUpstreamLimits({ upstreamTimeoutMs: 5000 }, {})).toMatchObject({
      headersTimeoutMs: 5000,
      bodyTimeoutMs: defaultUpstreamLimits.bodyTimeoutMs,
      connectTimeoutMs: undefined,
      totalTimeoutMs: undefined,
    });
    expect(
      resolveUpstreamLimits(
        { upstreamTimeoutMs: 5000 },
        { timeouts: { headersMs: 700, connectMs: 250, totalMs: 9000, streamIdleMs: 1200 } },
      ),
    ).toMatchObject({ headersTimeoutMs: 700, connectTimeoutMs: 250, totalTimeoutMs: 9000, streamIdleTimeoutMs: 1200 });
  });
});
