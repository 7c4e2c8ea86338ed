// The code-pair programs read one integer and print one expression of it, so a program's verdict on
// a problem's golden tests never changes: each distinct (problem, program) is judged once in the
// sandbox (src/verify/code) and the verdict reused across episodes, steps and evaluations (the
// environment's own cache lives one episode; a sandboxed Python start costs ~50 ms of CPU per test).
import { sandboxJudge, type CodeJudge } from '../../env/code-env.ts';
import type { CodeProblem } from '../../env/datasets/types.ts';
import type { CodeVerdict } from '../../verify/code/index.ts';

export function cachedJudge(inner: CodeJudge = sandboxJudge): CodeJudge & { judged: () => number } {
  const cache = new Map<string, Promise<CodeVerdict>>();
  const judge = (program: string, problem: CodeProblem, timeoutMs: number): Promise<CodeVerdict> => {
    const key = `${problem.id}\u0000${program}`;
    let hit = cache.get(key);
    if (!hit) {
      hit = inner(program, problem, timeoutMs);
      cache.set(key, hit);
    }
    return hit;
  };
  return Object.assign(judge, { judged: () => cache.size });
}
