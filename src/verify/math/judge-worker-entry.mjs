// Entry of the thread that judges maths answers for timed-judge.ts. Worker threads do not inherit the
// main thread's TypeScript loader, so this plain module registers tsx (as bin/marft.mjs does) first.
import { register } from 'tsx/esm/api';

register();
await import('./judge-worker.ts');
