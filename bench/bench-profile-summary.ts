import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The parts of a V8 `.cpuprofile` the summary reads. */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  }[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time of one function or one area. */
export interface SelfTime {
  name: string;
  /** Microseconds over the window. */
  microseconds: number;
}

/** A profile reduced to what the note and the report print. */
export interface ProfileSummary {
  /** Sampled microseconds in total, idle included. */
  sampledMicroseconds: number;
  /** Sampled microseconds the JS thread was not idle. */
  busyMicroseconds: number;
  /** Self time per area (torii source folder, package, node internal module, V8), largest first. */
  areas: SelfTime[];
  /** Self time per function (name and where it is), largest first. */
  functions: SelfTime[];
}

/** Maps a bundle's generated positions back to the sources, when the bundle has a `.map` beside it. */
export type PositionMapper = (url: string, line: number, column: number) => { file: string; line: number } | undefined;

/** A {@link PositionMapper} over the `<file>.map` of every `file://` url it meets (cached per url). */
export function sourceMapMapper(): PositionMapper {
  const maps = new Map<string, SourceMap | undefined>();
  return (url, line, column) => {
    if (!url.startsWith('file://')) return undefined;
    let map = maps.get(url);
    if (!maps.has(url)) {
      const path = `${fileURLToPath(url)}.map`;
      map = existsSync(path) ? new SourceMap(JSON.parse(readFileSync(path, 'utf8'))) : undefined;
      maps.set(url, map);
    }
    const entry = map?.findEntry(line, column);
    if (entry === undefined || !('originalSource' in entry)) return undefined;
    return { file: entry.originalSource, line: entry.originalLine + 1 };
  };
}

/** The area a source file belongs to: `torii src/routes`, `pkg undici`, `node:internal/streams`, ... */
export function areaOf(file: string, functionName: string): string {
  if (file === '') return functionName.startsWith('(') ? functionName : '(native/V8 builtins)';
  if (file.startsWith('node:')) {
    const parts = file.slice('node:'.length).split('/');
    return `node:${parts[0] === 'internal' && parts.length > 2 ? `internal/${parts[1]}` : parts.join('/')}`;
  }
  if (file.startsWith('wasm://')) return 'wasm';
  const modules = file.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = file.slice(modules + 'node_modules/'.length).split('/');
    return `pkg ${rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  const torii = /(?:^|\/)(src|providers|adapters)\/(.*)$/.exec(file);
  if (torii !== null) {
    const [, root, rest] = torii;
    const folder = rest!.includes('/') ? rest!.slice(0, rest!.indexOf('/')) : rest!;
    return `torii ${root}/${folder}`;
  }
  return file.replace(/^file:\/\//, '');
}

/**
 * Self time per area and per function of a CPU profile. Each sample is charged the time to the next one; bundled
 * frames are mapped to their sources by `mapPosition` (a `sourceMapMapper()` for `dist/server.js`).
 *
 * @example
 * ```ts
 * const summary = summarizeProfile(JSON.parse(readFileSync('1234.cpuprofile', 'utf8')), sourceMapMapper());
 * console.log(formatProfileSummary(summary, { requests: 10_000 }));
 * ```
 */
export function summarizeProfile(profile: CpuProfile, mapPosition: PositionMapper = () => undefined): ProfileSummary {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfByNode = new Map<number, number>();
  let sampled = 0;
  for (let index = 0; index < profile.samples.length; index++) {
    const delta = profile.timeDeltas[index + 1] ?? 0;
    sampled += delta;
    const id = profile.samples[index]!;
    selfByNode.set(id, (selfByNode.get(id) ?? 0) + delta);
  }
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  let idle = 0;
  for (const [id, microseconds] of selfByNode) {
    const frame = nodes.get(id)?.callFrame;
    if (frame === undefined) continue;
    if (frame.functionName === '(idle)') {
      idle += microseconds;
      continue;
    }
    const mapped = mapPosition(frame.url, frame.lineNumber, frame.columnNumber);
    const file = mapped?.file ?? frame.url;
    const line = mapped?.line ?? frame.lineNumber + 1;
    const area = areaOf(file.replace(/^.*?\/(src|providers|adapters)\//, '$1/'), frame.functionName);
    areas.set(area, (areas.get(area) ?? 0) + microseconds);
    const where = file === '' ? '' : ` ${shortFile(file)}:${line}`;
    const name = `${frame.functionName || '(anonymous)'}${where}`;
    functions.set(name, (functions.get(name) ?? 0) + microseconds);
  }
  const sorted = (map: Map<string, number>): SelfTime[] =>
    [...map]
      .map(([name, microseconds]) => ({ name, microseconds }))
      .sort((left, right) => right.microseconds - left.microseconds);
  return {
    sampledMicroseconds: sampled,
    busyMicroseconds: sampled - idle,
    areas: sorted(areas),
    functions: sorted(functions),
  };
}

/** The last parts of a path: the package and file of a dependency, the repository path of torii's own. */
export function shortFile(file: string): string {
  const modules = file.lastIndexOf('node_modules/');
  if (modules >= 0) return file.slice(modules + 'node_modules/'.length).replace(/^\.pnpm\/[^/]+\/node_modules\//, '');
  return file.replace(/^file:\/\//, '').replace(/^.*?\/((src|providers|adapters)\/)/, '$1');
}

/**
 * The summary as text: busy time per request, then the top areas and functions with their share of the busy time
 * and their microseconds per request.
 */
export function formatProfileSummary(
  summary: ProfileSummary,
  options: { requests: number; top?: { areas: number; functions: number } },
): string {
  const { requests } = options;
  const top = options.top ?? { areas: 15, functions: 25 };
  const perRequest = (microseconds: number): string => (microseconds / Math.max(1, requests)).toFixed(2).padStart(7);
  const share = (microseconds: number): string =>
    `${((100 * microseconds) / Math.max(1, summary.busyMicroseconds)).toFixed(1).padStart(5)}%`;
  const line = (entry: SelfTime): string =>
    `  ${share(entry.microseconds)} ${perRequest(entry.microseconds)} us/req  ${entry.name}`;
  return [
    `JS thread busy ${(summary.busyMicroseconds / 1e6).toFixed(2)} s of ${(summary.sampledMicroseconds / 1e6).toFixed(2)} s sampled = ` +
      `${(summary.busyMicroseconds / Math.max(1, requests)).toFixed(1)} us per request (${requests} requests)`,
    'by area (self time):',
    ...summary.areas.slice(0, top.areas).map(line),
    'top functions (self time):',
    ...summary.functions.slice(0, top.functions).map(line),
  ].join('\n');
}
