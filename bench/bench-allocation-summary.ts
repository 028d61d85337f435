import { shortFile, type PositionMapper } from './bench-profile-summary.ts';

/** The parts of a V8 sampling heap profile (`HeapProfiler.stopSampling`) the summary reads. */
export interface AllocationProfile {
  head: AllocationNode;
  samples: { size: number; nodeId: number }[];
}

/** One node of the allocation call tree. */
interface AllocationNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children: AllocationNode[];
}

/** Bytes allocated by one function (itself, or under it when it is the nearest torii frame). */
export interface AllocatedBytes {
  name: string;
  bytes: number;
}

/** An allocation profile reduced to what the note prints. */
export interface AllocationSummary {
  /** Sampled bytes in total (each sample stands for its object's size). */
  totalBytes: number;
  /** Bytes per allocating function (the top frame), largest first. */
  byFunction: AllocatedBytes[];
  /** Bytes per nearest torii frame on the stack (`src/`, `providers/`, `adapters/`), largest first. */
  byToriiFrame: AllocatedBytes[];
}

/**
 * Bytes allocated per function of a sampling heap profile taken with both collectors' objects included (so it
 * measures allocation, not retention). Frames are named as in the CPU summary; `byToriiFrame` charges each sample to
 * the innermost frame in torii's own code, which answers "which of our functions makes the garbage" through the
 * builtins and packages it calls.
 *
 * @example
 * ```ts
 * const summary = summarizeAllocations(JSON.parse(readFileSync('1234.heapprofile', 'utf8')), sourceMapMapper());
 * console.log(formatAllocationSummary(summary, { requests: 10_000 }));
 * ```
 */
export function summarizeAllocations(
  profile: AllocationProfile,
  mapPosition: PositionMapper = () => undefined,
): AllocationSummary {
  const frameName = new Map<number, string>();
  const toriiFrame = new Map<number, string>();
  const visit = (node: AllocationNode, nearestTorii: string): void => {
    const { functionName, url, lineNumber, columnNumber } = node.callFrame;
    const mapped = mapPosition(url, lineNumber, columnNumber);
    const file = mapped?.file ?? url;
    const where = file === '' ? '' : ` ${shortFile(file)}:${mapped?.line ?? lineNumber + 1}`;
    const name = `${functionName || '(anonymous)'}${where}`;
    const torii =
      /(?:^|\/)(src|providers|adapters)\//.test(file) && !file.includes('node_modules/') ? name : nearestTorii;
    frameName.set(node.id, name);
    toriiFrame.set(node.id, torii);
    for (const child of node.children) visit(child, torii);
  };
  visit(profile.head, '(outside torii)');
  const byFunction = new Map<string, number>();
  const byTorii = new Map<string, number>();
  let totalBytes = 0;
  for (const { size, nodeId } of profile.samples) {
    totalBytes += size;
    const name = frameName.get(nodeId) ?? '(unknown)';
    byFunction.set(name, (byFunction.get(name) ?? 0) + size);
    const torii = toriiFrame.get(nodeId) ?? '(unknown)';
    byTorii.set(torii, (byTorii.get(torii) ?? 0) + size);
  }
  const sorted = (map: Map<string, number>): AllocatedBytes[] =>
    [...map].map(([name, bytes]) => ({ name, bytes })).sort((left, right) => right.bytes - left.bytes);
  return { totalBytes, byFunction: sorted(byFunction), byToriiFrame: sorted(byTorii) };
}

/** The summary as text: bytes per request in total, per allocating function and per nearest torii frame. */
export function formatAllocationSummary(
  summary: AllocationSummary,
  options: { requests: number; top?: number },
): string {
  const requests = Math.max(1, options.requests);
  const top = options.top ?? 20;
  const line = ({ name, bytes }: AllocatedBytes): string =>
    `  ${((100 * bytes) / Math.max(1, summary.totalBytes)).toFixed(1).padStart(5)}% ${(bytes / requests).toFixed(0).padStart(7)} B/req  ${name}`;
  return [
    `allocated ${(summary.totalBytes / requests / 1024).toFixed(1)} KB per request (sampled, ${requests} requests)`,
    'allocating functions:',
    ...summary.byFunction.slice(0, top).map(line),
    'nearest torii frame:',
    ...summary.byToriiFrame.slice(0, top).map(line),
  ].join('\n');
}
