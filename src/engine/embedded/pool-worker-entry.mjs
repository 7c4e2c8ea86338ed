// Entry of a worker thread of the engine's pool (thread-pool.ts). Worker threads do not inherit the
// main thread's TypeScript loader: in the built package (dist/, where this file is copied next to
// the compiled pool-worker.js) the compiled module is imported; next to the sources, tsx is
// registered first (as bin/marft.mjs does) and the TypeScript imported.
import { existsSync } from 'node:fs';

const compiled = new URL('./pool-worker.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./pool-worker.ts');
}
