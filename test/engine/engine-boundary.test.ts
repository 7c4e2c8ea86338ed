// The engine's boundary (docs/architecture.md, "The engine"), checked on the imports of every source
// file under src/ (test/imports.ts). Tests (*.test.ts) are left out: they may reach into what they test.
//
//   (a) Code above the engine opens and uses engines through the public files only (PUBLIC_ENGINE_FILES).
//   (b) An engine's folder (ENGINE_FOLDERS) imports no other engine's folder, except where one served
//       engine builds on another (ENGINE_ON_ENGINE, said in the importing file's header).
//   (c) The engine imports nothing of the project from outside src/engine/ but the seeded generators
//       (src/core/).
//   (d) The engine level every engine shares (src/engine/*.ts besides index.ts and open.ts, which
//       assemble the engines, and the file formats in src/engine/hf/) imports no engine's folder but
//       for the listed exceptions (SHARED_LEVEL_EXCEPTIONS).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sourceImports, type SourceImport } from '../imports.ts';

/** What code outside src/engine/ may import from it (docs/architecture.md lists the same). */
const PUBLIC_ENGINE_FILES = ['src/engine/index.ts', 'src/engine/open.ts', 'src/engine/types.ts'];

/** The engines, each in its own folder. */
const ENGINE_FOLDERS = ['embedded', 'torch', 'openai', 'vllm', 'tabular'];

/** [importing engine, imported engine]: vLLM is reached as an OpenAI-compatible server. */
const ENGINE_ON_ENGINE: [string, string][] = [['vllm', 'openai']];

/**
 * [file, what it imports]: the seeded generator (Rng) and the stop-string search still live in the
 * embedded engine's sampler, and the shared level uses both so that every engine initialises and cuts
 * as the embedded engine does (src/engine/trainables.ts's header; issue 17).
 */
const SHARED_LEVEL_EXCEPTIONS: [string, string][] = [
  ['src/engine/trainables.ts', 'src/engine/embedded/sampling.ts'],
  ['src/engine/stop-strings.ts', 'src/engine/embedded/sampling.ts'],
];

/** What the engine may import of the project outside src/engine/. */
const ENGINE_MAY_IMPORT = (path: string): boolean => path.startsWith('src/core/');

/** The engine folder `path` lies in (embedded, torch, …), or null for the engine level and outside the engine. */
function engineFolderOf(path: string): string | null {
  const m = /^src\/engine\/([^/]+)\//.exec(path);
  return m && ENGINE_FOLDERS.includes(m[1]!) ? m[1]! : null;
}

const isTest = (file: string): boolean => /\.test\.[cm]?[jt]s$/.test(file);

/** One line per import that crosses the engine's boundary, naming the file, its line and the import. */
function engineBoundaryViolations(imports: readonly SourceImport[]): string[] {
  const out: string[] = [];
  for (const imp of imports) {
    if (isTest(imp.file) || imp.resolved === null) continue;
    const { file, resolved: to } = imp;
    const at = `${file}:${imp.line} imports ${imp.specifier}`;
    const fromEngine = file.startsWith('src/engine/'), toEngine = to.startsWith('src/engine/');
    if (!fromEngine) {
      if (toEngine && !PUBLIC_ENGINE_FILES.includes(to)) out.push(`${at}: above the engine, import only ${PUBLIC_ENGINE_FILES.join(', ')}`);
      continue;
    }
    if (!toEngine) {
      if (!ENGINE_MAY_IMPORT(to)) out.push(`${at}: the engine imports nothing of the project from outside src/engine/ but src/core/`);
      continue;
    }
    const fromFolder = engineFolderOf(file), toFolder = engineFolderOf(to);
    if (fromFolder !== null) {
      if (toFolder !== null && toFolder !== fromFolder && !ENGINE_ON_ENGINE.some(([a, b]) => a === fromFolder && b === toFolder)) {
        out.push(`${at}: the ${fromFolder} engine imports the ${toFolder} engine's folder; shared code belongs at the engine level (src/engine/, src/engine/hf/)`);
      }
      continue;
    }
    const assembles = file === 'src/engine/index.ts' || file === 'src/engine/open.ts';
    if (!assembles && toFolder !== null && !SHARED_LEVEL_EXCEPTIONS.some(([f, t]) => f === file && t === to)) {
      out.push(`${at}: the engine level every engine shares imports no engine's folder (only index.ts and open.ts assemble engines)`);
    }
  }
  return out;
}

test('src/ keeps the engine boundary: public engine files above it, no engine on another, the shared level on none', () => {
  const imports = sourceImports('src');
  // The reader found the engine's own imports (so an empty list below is not an empty read).
  assert.ok(imports.some((i) => i.file === 'src/run/setup.ts' && i.resolved === 'src/engine/index.ts'));
  assert.ok(imports.some((i) => i.file === 'src/engine/vllm/engine.ts' && i.resolved === 'src/engine/openai/engine.ts'));
  assert.deepEqual(engineBoundaryViolations(imports), []);
});

test('each rule names a planted crossing, and lets the allowed imports through', () => {
  const imp = (file: string, resolved: string | null, specifier = resolved ?? ''): SourceImport => ({ file, specifier, resolved, line: 3 });
  const planted = [
    imp('src/run/setup.ts', 'src/engine/vllm/server.ts', '../engine/vllm/server.ts'), // (a)
    imp('src/cli/commands/train.ts', 'src/engine/hf/config.ts'), // (a)
    imp('src/engine/torch/engine.ts', 'src/engine/embedded/lora.ts'), // (b)
    imp('src/engine/openai/engine.ts', 'src/engine/vllm/server.ts'), // (b): only vllm → openai is allowed
    imp('src/engine/embedded/engine.ts', 'src/engine/torch/framing.ts'), // (b)
    imp('src/engine/tabular/engine.ts', 'src/train/loop.ts'), // (c)
    imp('src/engine/hf/peft.ts', 'src/engine/embedded/weights.ts'), // (d)
    imp('src/engine/trainables.ts', 'src/engine/embedded/param.ts'), // (d): only its listed import is allowed
  ];
  const allowed = [
    imp('src/run/setup.ts', 'src/engine/index.ts'),
    imp('src/train/loop.ts', 'src/engine/types.ts'),
    imp('src/run/teacher.ts', 'src/engine/open.ts'),
    imp('src/engine/vllm/engine.ts', 'src/engine/openai/engine.ts'),
    imp('src/engine/torch/engine.ts', 'src/engine/hf/trainable-folders.ts'),
    imp('src/engine/torch/engine.ts', 'src/engine/trainables.ts'),
    imp('src/engine/embedded/engine.ts', 'src/engine/hf/safetensors.ts'),
    imp('src/engine/tabular/engine.ts', 'src/core/rng.ts'),
    imp('src/engine/open.ts', 'src/engine/embedded/engine-io.ts'),
    imp('src/engine/trainables.ts', 'src/engine/embedded/sampling.ts'),
    imp('src/engine/hf/config.ts', null, 'node:fs'),
    imp('src/engine/hf/peft.test.ts', 'src/engine/embedded/sampling.ts'),
    imp('src/train/loop.test.ts', 'src/engine/tabular/engine.ts'),
  ];
  const found = engineBoundaryViolations([...planted, ...allowed]);
  assert.equal(found.length, planted.length, found.join('\n'));
  planted.forEach((p, i) => assert.ok(found[i]!.startsWith(`${p.file}:3 imports ${p.specifier}: `), found[i]));
});
