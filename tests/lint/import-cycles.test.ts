import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * No import cycles between the product's modules (type-only imports included): a cycle means two files that can only
 * be understood, moved or tested together, which is how the seam types ended up tangled inside `src/routes/`.
 * Relative imports of `.ts` files in src/, providers/ and adapters/ form the graph; tests are left out.
 */
const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
const roots = ['src', 'providers', 'adapters'];
const importPattern = /(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+\.ts)'/g;

function sourceFiles(directory: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(join(repositoryRoot, directory), { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) files.push(path);
  }
  return files;
}

function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of roots.flatMap(sourceFiles)) {
    // Comments left out: a doc comment's `@example` may show an import.
    const text = readFileSync(join(repositoryRoot, file), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '');
    const targets = [...text.matchAll(importPattern)].map((match) =>
      normalize(join(dirname(file), match[1] as string)),
    );
    graph.set(file, targets);
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan's algorithm), each a cycle to break. */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next++;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

describe('import graph', () => {
  it('reads the product files', () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get(join('src', 'gateway.ts'))).toContain(join('src', 'routes', 'request-record.ts'));
  });

  it('has no cycles in src/, providers/ or adapters/', () => {
    const found = cycles(importGraph()).map((component) =>
      component.map((file) => relative('.', file).replaceAll('\\', '/')),
    );
    expect(found).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(cycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });
});
