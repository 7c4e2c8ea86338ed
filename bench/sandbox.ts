// Contained judging throughput: HumanEval's canonical solutions judged through the project's judge
// (src/verify/code: the sandbox, its limits and isolation) against the same programs run unsandboxed
// (`python3 prog.py` on program + check code, exit status 0 = pass), both two at a time, in the same
// run. Ends with one JSON line {"contained_per_s", "unsandboxed_per_s", ...}.
//   npm run bench:sandbox [-- --problems N]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadDataset, type CodeProblem } from '../src/env/datasets/index.ts';
import { SlotLimiter } from '../src/sandbox/index.ts';
import { verifyCode } from '../src/verify/code/index.ts';

const arg = process.argv.indexOf('--problems');
const limit = arg > 0 ? Number(process.argv[arg + 1]) : 164;
const problems = (loadDataset('humaneval').problems as CodeProblem[]).slice(0, limit);
const CONCURRENCY = 2;
const TIMEOUT_MS = 10_000;

async function pool<T>(items: T[], n: number, f: (x: T) => Promise<boolean>): Promise<number> {
  let next = 0;
  let passed = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) if (await f(items[next++]!)) passed++;
  }));
  return passed;
}

const dir = mkdtempSync(join(tmpdir(), 'marft-bench-sandbox-'));
function unsandboxed(p: CodeProblem): Promise<boolean> {
  const file = join(dir, `${p.id.replace(/\W/g, '_')}.py`);
  writeFileSync(file, `${p.referenceSolution}\n${p.tests.kind === 'assert' ? p.tests.code : ''}`);
  return new Promise((resolve) => {
    const child = spawn('python3', [file], { stdio: 'ignore', timeout: TIMEOUT_MS });
    child.on('exit', (code) => resolve(code === 0));
  });
}

const limiter = new SlotLimiter(CONCURRENCY);
const contained = async (p: CodeProblem) => {
  const v = await verifyCode({ program: p.referenceSolution!, tests: p.tests, timeoutMs: TIMEOUT_MS, limiter });
  return v.total > 0 && v.passed === v.total;
};

// Warm both paths once (page cache, python's bytecode of the standard library).
await unsandboxed(problems[0]!);
await contained(problems[0]!);
let t = performance.now();
const passedUnsandboxed = await pool(problems, CONCURRENCY, unsandboxed);
const unsandboxedS = (performance.now() - t) / 1000;
t = performance.now();
const passedContained = await pool(problems, CONCURRENCY, contained);
const containedS = (performance.now() - t) / 1000;
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({
  contained_per_s: +(problems.length / containedS).toFixed(2),
  unsandboxed_per_s: +(problems.length / unsandboxedS).toFixed(2),
  programs: problems.length, concurrency: CONCURRENCY,
  passed_contained: passedContained, passed_unsandboxed: passedUnsandboxed,
}));
