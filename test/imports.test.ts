// test/imports.ts, the import reader of the layering tests: what counts as an import, and where it resolves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { importsOf, sourceFiles } from './imports.ts';

test('importsOf: every form of import, across lines, resolved against the file; comments and strings are not imports', () => {
  const text = [
    "import { a,", // 1
    "  b } from '../engine/index.ts';", // 2
    "import type { C } from './c.ts';", // 3
    "export * from '../../rng.ts';", // 4
    "export type { D } from './sub/d.ts';", // 5
    "import 'node:fs';", // 6
    "// import { x } from '../engine/embedded/engine.ts';", // 7
    "const s = \"import { y } from '../engine/torch/engine.ts'\";", // 8
    "const t = `", // 9
    "import { z } from '../engine/vllm/server.ts';`;", // 10
    "const m = await import('./lazy.ts');", // 11
    "export const e = 1;", // 12
  ].join('\n');
  const found = importsOf('src/run/setup.ts', text).map((i) => [i.line, i.specifier, i.resolved]);
  assert.deepEqual(found, [
    [2, '../engine/index.ts', 'src/engine/index.ts'],
    [3, './c.ts', 'src/run/c.ts'],
    [4, '../../rng.ts', 'rng.ts'],
    [5, './sub/d.ts', 'src/run/sub/d.ts'],
    [6, 'node:fs', null],
    [11, './lazy.ts', 'src/run/lazy.ts'],
  ]);
});

test('sourceFiles lists src/ with repository-relative paths, tests included', () => {
  const files = sourceFiles('src');
  assert.ok(files.includes('src/engine/index.ts'));
  assert.ok(files.includes('src/engine/hf/peft.test.ts'));
  assert.ok(files.includes('src/engine/embedded/pool-worker-entry.mjs'));
  assert.ok(files.every((f) => f.startsWith('src/') && !f.includes('\\')));
});
