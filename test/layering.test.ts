// The layering of src/ (docs/architecture.md, "Layers"): every import goes to the importer's own
// folder or to a folder below it in LAYERS, and no set of files imports itself round (an import
// circle, type-only imports included: they tie the files' meaning together just the same). The engine's
// own boundary (index/open/types above it; no engine folder on another) is test/engine/engine-boundary.test.ts's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sourceImports, type SourceImport } from './imports.ts';

/** The folders of src/ from the bottom up; a single file directly under src/ counts as its own name. */
export const LAYERS = [
  'core', 'engine', 'tokenizer', 'config', 'sandbox', 'verify', 'workflow', 'env', 'runs', 'plots',
  'train', 'opd', 'algorithms', 'tasks', 'run', 'experiments', 'export', 'serve', 'dashboard', 'demo', 'cli',
  // src/index.ts: the package's public entry (docs/library.md), above everything it re-exports.
  'index',
] as const;

const layerOf = (file: string): string => file.split('/')[1]!.replace(/\.(ts|mts|mjs|js)$/, '');

/** Imports of src/ files (tests excluded) that resolve to another src/ file. */
function internalImports(): (SourceImport & { resolved: string })[] {
  return sourceImports('src').filter((i): i is SourceImport & { resolved: string } => !i.file.endsWith('.test.ts') && i.resolved !== null && i.resolved.startsWith('src/'));
}

/** Imports that go to a folder above the importer's, or to a folder LAYERS does not name. */
export function upwardImports(imports: readonly (SourceImport & { resolved: string })[]): string[] {
  const out: string[] = [];
  for (const i of imports) {
    const from = LAYERS.indexOf(layerOf(i.file) as (typeof LAYERS)[number]);
    const to = LAYERS.indexOf(layerOf(i.resolved) as (typeof LAYERS)[number]);
    if (from < 0 || to < 0) out.push(`${i.file}:${i.line}: folder ${from < 0 ? layerOf(i.file) : layerOf(i.resolved)} is not in LAYERS`);
    else if (to > from) out.push(`${i.file}:${i.line} imports ${i.resolved}: ${layerOf(i.file)} sits below ${layerOf(i.resolved)}`);
  }
  return out;
}

/** The import circles among files (strongly connected components of more than one file, or a file importing itself), each sorted. */
export function importCircles(imports: readonly { file: string; resolved: string }[]): string[][] {
  const graph = new Map<string, Set<string>>();
  for (const i of imports) {
    if (!graph.has(i.file)) graph.set(i.file, new Set());
    if (!graph.has(i.resolved)) graph.set(i.resolved, new Set());
    graph.get(i.file)!.add(i.resolved);
  }
  // Tarjan's algorithm, iteratively (the graph has hundreds of files).
  let index = 0;
  const indices = new Map<string, number>(), low = new Map<string, number>(), onStack = new Set<string>();
  const stack: string[] = [];
  const circles: string[][] = [];
  for (const root of [...graph.keys()].sort()) {
    if (indices.has(root)) continue;
    const work: { node: string; next: string[] }[] = [];
    const visit = (node: string) => {
      indices.set(node, index);
      low.set(node, index++);
      stack.push(node);
      onStack.add(node);
      work.push({ node, next: [...graph.get(node)!].sort() });
    };
    visit(root);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const child = top.next.shift();
      if (child !== undefined) {
        if (!indices.has(child)) visit(child);
        else if (onStack.has(child)) low.set(top.node, Math.min(low.get(top.node)!, indices.get(child)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!));
      }
      if (low.get(top.node) === indices.get(top.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== top.node);
        if (component.length > 1 || graph.get(top.node)!.has(top.node)) circles.push(component.sort());
      }
    }
  }
  return circles;
}

test('every import of src/ goes to its own folder or one below it (docs/architecture.md, Layers)', () => {
  const up = upwardImports(internalImports());
  assert.deepEqual(up, [], up.join('\n'));
});

test('no import circle among the files of src/', () => {
  const circles = importCircles(internalImports());
  assert.deepEqual(circles, [], circles.map((c) => c.join(' -> ')).join('\n'));
});

test('the checks name a planted upward import and a planted circle', () => {
  const at = (file: string, resolved: string) => ({ file, resolved, specifier: '', line: 1 });
  assert.deepEqual(upwardImports([at('src/train/loop.ts', 'src/algorithms/index.ts')]), ['src/train/loop.ts:1 imports src/algorithms/index.ts: train sits below algorithms']);
  assert.deepEqual(upwardImports([at('src/algorithms/index.ts', 'src/train/loop.ts')]), []);
  assert.match(upwardImports([at('src/newfolder/x.ts', 'src/core/rng.ts')])[0]!, /folder newfolder is not in LAYERS/);
  assert.deepEqual(importCircles([at('src/a/x.ts', 'src/a/y.ts'), at('src/a/y.ts', 'src/a/z.ts'), at('src/a/z.ts', 'src/a/x.ts'), at('src/a/z.ts', 'src/a/w.ts')]), [['src/a/x.ts', 'src/a/y.ts', 'src/a/z.ts']]);
  assert.deepEqual(importCircles([at('src/a/x.ts', 'src/a/x.ts')]), [['src/a/x.ts']]);
  assert.deepEqual(importCircles([at('src/a/x.ts', 'src/a/y.ts')]), []);
});
