#!/usr/bin/env node
// Entry point of `npx marft`: picks the code to run, then hands over to the command dispatcher.

// ---- dist/ or the sources ------------------------------------------------------------------------
// The built package (dist/, made by scripts/build-dist.mjs at `npm ci`) starts without compiling
// anything; it is used while it is there and no file or folder of src/ is newer than its BUILT
// stamp. Otherwise (a checkout without a build, a source edited since, MARFT_FROM_SOURCE=1) tsx is
// registered and the TypeScript sources run as they are.
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The newest modification time (ms) of `dir` and everything under it. */
function newest(dir) {
  let t = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    t = Math.max(t, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return t;
}

function distIsCurrent() {
  if (process.env.MARFT_FROM_SOURCE === '1') return false;
  try {
    const built = statSync(fileURLToPath(new URL('../dist/BUILT', import.meta.url))).mtimeMs;
    return newest(fileURLToPath(new URL('../src', import.meta.url))) <= built;
  } catch {
    return false;
  }
}

let main;
if (distIsCurrent()) {
  ({ main } = await import('../dist/cli/main.js'));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli/main.ts'));
}
// ---------------------------------------------------------------------------------------------------

process.exitCode = await main(process.argv.slice(2));
