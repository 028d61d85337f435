import { describe, expect, it } from 'vitest';
import { formatAllocationSummary, summarizeAllocations, type AllocationProfile } from './bench-allocation-summary.ts';

const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 9, columnNumber: 0 });

// (root) -> handle (src) -> parse (undici) -> JSON.parse (builtin); (root) -> tick (node internal).
const profile: AllocationProfile = {
  head: {
    id: 1,
    callFrame: frame('(root)', ''),
    children: [
      {
        id: 2,
        callFrame: frame('handle', 'file:///r/src/routes/handle.ts'),
        children: [
          {
            id: 3,
            callFrame: frame('parse', 'file:///r/node_modules/undici/lib/util.js'),
            children: [{ id: 4, callFrame: frame('parse', ''), children: [] }],
          },
        ],
      },
      { id: 5, callFrame: frame('tick', 'node:internal/process/task_queues'), children: [] },
    ],
  },
  samples: [
    { size: 100, nodeId: 2 },
    { size: 300, nodeId: 3 },
    { size: 500, nodeId: 4 },
    { size: 100, nodeId: 5 },
  ],
};

describe('summarizeAllocations', () => {
  it('charges each sample to its allocating function and to the innermost torii frame above it', () => {
    const summary = summarizeAllocations(profile);
    expect(summary.totalBytes).toBe(1_000);
    expect(summary.byFunction).toEqual([
      { name: 'parse', bytes: 500 },
      { name: 'parse undici/lib/util.js:10', bytes: 300 },
      { name: 'handle src/routes/handle.ts:10', bytes: 100 },
      { name: 'tick node:internal/process/task_queues:10', bytes: 100 },
    ]);
    expect(summary.byToriiFrame).toEqual([
      { name: 'handle src/routes/handle.ts:10', bytes: 900 },
      { name: '(outside torii)', bytes: 100 },
    ]);
  });

  it('prints bytes per request and the shares', () => {
    const text = formatAllocationSummary(summarizeAllocations(profile), { requests: 10 });
    expect(text).toContain('allocated 0.1 KB per request (sampled, 10 requests)');
    expect(text).toContain(' 90.0%      90 B/req  handle src/routes/handle.ts:10');
  });
});
