#!/usr/bin/env node
// Builds dist/: the sources of src/ compiled by tsc (tsconfig.build.json: `.ts` import specifiers
// rewritten to `.js`, declarations for the package's types), with src/'s other runtime files (the
// worker entries *.mjs, the sandbox's *.py) copied beside them. bin/marft.mjs runs dist/ when it is
// there and not older than src/ (else the sources, through tsx), and `import ... from 'marft'`
// resolves to dist/index.js (package.json "exports"; docs/library.md).
//
// Run by `npm ci` / `npm install` (the "prepare" script) and by `npm run build`. The folder is
// written under a temporary name and renamed into place, so an interrupted build leaves the old
// dist/ or none, never half of one. Without TypeScript (an install that omits devDependencies) it
// says so and builds nothing: marft then runs its sources through tsx, as before.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');
// `--out DIR`: build there instead (test/cli/package.test.ts builds a package of its own).
const outAt = process.argv.indexOf('--out');
const dist = outAt > 0 ? resolve(process.argv[outAt + 1]) : join(root, 'dist');
const tmp = join(dirname(dist), `.${basename(dist)}.tmp-${process.pid}`);

let tsc;
try {
  tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
} catch {
  console.error('[build] TypeScript is not installed (devDependencies omitted): dist/ not built; marft runs its sources through tsx');
  process.exit(0);
}

const started = Date.now();
rmSync(tmp, { recursive: true, force: true });
const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', tmp], { cwd: root, stdio: 'inherit' });
if (r.status !== 0) {
  rmSync(tmp, { recursive: true, force: true });
  console.error(`[build] tsc failed (exit ${r.status ?? r.signal}): dist/ not built; marft runs its sources through tsx`);
  process.exit(1);
}

/** Copies every file of src/ that tsc does not compile (not .ts) into the same place under `to`. */
function copyAssets(dir, to) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const from = join(dir, entry.name);
    if (entry.isDirectory()) copyAssets(from, to);
    else if (!entry.name.endsWith('.ts')) {
      const target = join(to, relative(src, from));
      mkdirSync(dirname(target), { recursive: true });
      copyFileSync(from, target);
    }
  }
}
copyAssets(src, tmp);
// Written last, dated when the compiler started: bin/marft.mjs uses dist/ only while no file or
// folder of src/ is newer (a source saved during the build counts as not compiled).
writeFileSync(join(tmp, 'BUILT'), `${new Date(started).toISOString()}\n`);
utimesSync(join(tmp, 'BUILT'), started / 1000, started / 1000);
rmSync(dist, { recursive: true, force: true });
renameSync(tmp, dist);
console.error(`[build] dist/ built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
if (!existsSync(join(dist, 'index.js'))) process.exit(1);
