// Entry of a worker thread of the engine's pool (thread-pool.ts). Worker threads do not inherit the
// main thread's TypeScript loader, so this plain module registers tsx (as bin/marft.mjs does) first.
import { register } from 'tsx/esm/api';

register();
await import('./pool-worker.ts');
