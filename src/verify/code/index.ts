// The code verifier: runs a Python program against golden tests in the sandbox and counts passes.
//
//   const v = await verifyCode({ program, tests: { kind: 'assert', code: test + '\ncheck(f)' }, timeoutMs: 10_000 });
//   v.passed / v.total   // the team reward for code (spec section 3)
//
// stdin/stdout tests run the program directly, one run per test. Assertion scripts and call-based
// tests run in harness.py, the judge, which receives the program and the tests on a private
// channel, runs the program in a second process that shares no memory with it, runs the tests
// itself and reports results tagged with a per-run random nonce (harness-channel.ts). See
// harness.py for why a program can forge no result, whatever it does in its own process.
import { readFileSync } from 'node:fs';
import { pythonInterpreter, PYTHON_FLAGS } from '../../sandbox/languages/python.ts';
import { runPython, runSandboxed } from '../../sandbox/index.ts';
import type { RunOutcome, RunResult } from '../../sandbox/index.ts';
import { compareOutput } from './compare-output.ts';
import { freshNonce, readHarnessChannel, type HarnessRecord } from './harness-channel.ts';
import { parsePyJson, pyJsonEqual, stringifyPyJson } from './json-values.ts';
import type { CodeTask, CodeVerdict, TestResult, TestStatus } from './types.ts';

export type { CodeTask, CodeTests, CodeVerdict, TestResult, TestStatus } from './types.ts';
export { compareOutput, compareValues } from './compare-output.ts';
export { parsePyJson, pyJsonEqual, stringifyPyJson, type PyJson } from './json-values.ts';

// The judge (main.py), the program's side and the value codec they share.
const HARNESS_FILES: Record<string, string> = Object.fromEntries(
  [['main.py', 'harness.py'], ['program_side.py', 'program_side.py'], ['wire.py', 'wire.py']].map(([name, file]) => [name, readFileSync(new URL(`./${file}`, import.meta.url), 'utf8')]),
);
const STDERR_CHARS = 1500;

export async function verifyCode(task: CodeTask): Promise<CodeVerdict> {
  const results = await judge(task);
  return { passed: results.filter((r) => r.status === 'passed').length, total: results.length, results };
}

function judge(task: CodeTask): Promise<TestResult[]> {
  switch (task.tests.kind) {
    case 'stdio':
      return judgeStdio(task, task.tests.tests);
    case 'assert':
      return judgeAsserts(task, '', [task.tests.code]);
    case 'asserts':
      return judgeAsserts(task, task.tests.setup ?? '', task.tests.tests);
    case 'call':
      return judgeCall(task, task.tests.fn, task.tests.cases);
  }
}

/** The status a test gets from how the process ended when no verdict came from the harness. */
function failureFromOutcome(outcome: RunOutcome, context: string): TestResult {
  const status: TestStatus = outcome.status === 'ok' ? 'runtime_error' : outcome.status;
  const why = outcome.status === 'ok' ? `${context}: the program exited (status 0) before the tests finished` : outcome.stderr;
  return { status, stderr: (why || `${outcome.status}${outcome.signal ? ` (${outcome.signal})` : ''}`).slice(-STDERR_CHARS) };
}

async function judgeStdio(task: CodeTask, tests: Array<{ stdin: string; stdout: string }>): Promise<TestResult[]> {
  return Promise.all(
    tests.map(async (t): Promise<TestResult> => {
      const opts: Parameters<typeof runPython>[0] = { source: task.program, stdin: t.stdin, timeoutMs: task.timeoutMs };
      if (task.limits) opts.limits = task.limits;
      if (task.limiter) opts.limiter = task.limiter;
      const outcome = await runPython(opts);
      if (outcome.status !== 'ok') return { status: outcome.status, stderr: outcome.stderr.slice(-STDERR_CHARS) || outcome.status };
      const cmp = compareOutput(outcome.stdout, t.stdout);
      return cmp.equal ? { status: 'passed' } : { status: 'wrong_answer', stderr: cmp.reason ?? 'output differs' };
    }),
  );
}

/**
 * Runs harness.py with a job; returns the process outcome, the records that carry this run's
 * nonce, and which assertion scripts the harness declared passed with its literal
 * "<nonce>:passed:<i>" lines.
 */
async function runHarness(task: CodeTask, job: Record<string, unknown>, timeoutMs: number): Promise<{ outcome: RunResult; records: HarnessRecord[]; passedScripts: Set<number> }> {
  const nonce = freshNonce();
  const spec: Parameters<typeof runSandboxed>[0] = {
    files: HARNESS_FILES,
    argv: [pythonInterpreter(), ...PYTHON_FLAGS, 'main.py'],
    timeoutMs,
    channelInput: `${JSON.stringify({ nonce, ...job })}\n`,
  };
  if (task.limits) spec.limits = task.limits;
  const outcome = await runSandboxed(spec, task.limiter);
  const { records, passedScripts } = readHarnessChannel(outcome.channel, nonce);
  return { outcome, records, passedScripts };
}

async function judgeAsserts(task: CodeTask, setup: string, tests: string[]): Promise<TestResult[]> {
  if (tests.length === 0) return [];
  const job = { mode: 'assert', program: task.program, setup, tests, case_timeout_s: task.timeoutMs / 1000 };
  // One script: the timeout covers it. Several: each has its own alarm, the wall clock covers all.
  const wallMs = tests.length === 1 ? task.timeoutMs : task.timeoutMs * tests.length + 2000;
  const { outcome, records, passedScripts } = await runHarness(task, job, wallMs);
  const early = records.find((r) => r.stage === 'harness' || r.stage === 'program' || r.stage === 'setup');
  return tests.map((_, i): TestResult => {
    if (passedScripts.has(i)) return { status: 'passed' };
    if (early) return { status: (early.status ?? 'runtime_error') as TestStatus, stderr: (early.error ?? '').slice(-STDERR_CHARS) };
    const rec = records.find((r) => r.case === i);
    if (rec?.status !== undefined && rec.status !== 'passed' && rec.status !== 'ok') return { status: rec.status, stderr: (rec.error ?? '').slice(-STDERR_CHARS) };
    return failureFromOutcome(outcome, tests.length === 1 ? 'assertions' : `assertion script ${i}`);
  });
}

async function judgeCall(task: CodeTask, fn: string, cases: Array<{ args: unknown[]; expected: unknown }>): Promise<TestResult[]> {
  if (cases.length === 0) return [];
  const caseTimeoutS = task.timeoutMs / 1000;
  const job = { mode: 'call', program: task.program, fn, cases: cases.map((c) => stringifyPyJson(c.args as never)), case_timeout_s: caseTimeoutS };
  // Every case gets its own alarm inside the harness; the wall clock covers them all plus start-up.
  const { outcome, records } = await runHarness(task, job, task.timeoutMs * cases.length + 2000);
  const programFailure = records.find((r) => r.stage === 'harness' || r.stage === 'program');
  return cases.map((c, i): TestResult => {
    if (programFailure) return { status: (programFailure.status ?? 'runtime_error') as TestStatus, stderr: (programFailure.error ?? '').slice(-STDERR_CHARS) };
    const rec = records.find((r) => r.case === i);
    if (!rec) return failureFromOutcome(outcome, `case ${i}`);
    if (rec.status !== 'ok') return { status: (rec.status ?? 'runtime_error') as TestStatus, stderr: (rec.error ?? '').slice(-STDERR_CHARS) };
    let value;
    try {
      value = parsePyJson(rec.value ?? '');
    } catch {
      return { status: 'wrong_answer', stderr: 'return value could not be read back' };
    }
    return pyJsonEqual(value, c.expected as never) ? { status: 'passed' } : { status: 'wrong_answer', stderr: `expected ${stringifyPyJson(c.expected as never).slice(0, 200)}, got ${(rec.value ?? '').slice(0, 200)}` };
  });
}
