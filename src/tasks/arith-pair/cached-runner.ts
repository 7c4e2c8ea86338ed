// The study's programs are one-line print expressions, so the same source on the same input always
// prints the same thing; each distinct program runs once in the sandbox and its outcome is reused
// (a sandboxed Python start costs ~50 ms of CPU, and the held-out evaluations and training steps
// meet the same programs again and again).
import { defaultProgramRunner, type ProgramRunner } from '../../env/program-runner.ts';
import type { RunOutcome } from '../../sandbox/index.ts';

export function cachedRunner(inner: ProgramRunner = defaultProgramRunner): ProgramRunner & { runs: () => number } {
  const cache = new Map<string, Promise<RunOutcome>>();
  let runs = 0;
  const run: ProgramRunner = (r) => {
    const key = `${r.stdin}\u0000${r.source}`;
    let hit = cache.get(key);
    if (!hit) {
      runs++;
      hit = inner(r);
      cache.set(key, hit);
    }
    return hit;
  };
  return Object.assign(run, { runs: () => runs });
}
