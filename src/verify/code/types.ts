// What the code verifier judges and what it answers (spec section 3, issue 3 item 5).
import type { SandboxLimits, SlotLimiter } from '../../sandbox/index.ts';
import type { PyJson } from './json-values.ts';

/** The three kinds of golden tests. */
export type CodeTests =
  /** Each test runs the program with `stdin` and compares stdout with LiveCodeBench's rules. */
  | { kind: 'stdio'; tests: Array<{ stdin: string; stdout: string }> }
  /** Code run after the program in the same interpreter (HumanEval `check(candidate)`, MBPP asserts); one test. */
  | { kind: 'assert'; code: string }
  /**
   * Several assertion scripts, one test each (dense rewards, e.g. MBPP's three asserts), after an
   * optional `setup` (MBPP's test_setup_code), all in one interpreter and in order.
   */
  | { kind: 'asserts'; setup?: string; tests: string[] }
  /** Call `fn(*args)` per case and compare the JSON-serialised return value with `expected`. */
  | { kind: 'call'; fn: string; cases: Array<{ args: PyJson[]; expected: PyJson }> };

export interface CodeTask {
  /** Python source. */
  program: string;
  tests: CodeTests;
  /** Wall-clock limit per test (per call case, per stdin run, or for the whole assertion script). */
  timeoutMs: number;
  limits?: Partial<SandboxLimits>;
  limiter?: SlotLimiter;
}

/**
 * One golden test's outcome. 'passed' needs positive evidence: matching output of a program that
 * exited 0, a matching serialised return value, or the harness's record that every assertion ran.
 */
export type TestStatus = 'passed' | 'wrong_answer' | 'runtime_error' | 'timeout' | 'memory' | 'output_limit' | 'killed';

export interface TestResult {
  status: TestStatus;
  /** Why it failed: a stderr or traceback excerpt, or a short reason. Absent when passed. */
  stderr?: string;
}

export interface CodeVerdict {
  passed: number;
  total: number;
  results: TestResult[];
}
