// The sandbox's one public entry (spec section 3; docs/sandbox.md).
//
//   const outcome = await runPython({ source, stdin: '1 2\n', timeoutMs: 30_000 });
//   if (outcome.status === 'ok') use(outcome.stdout);
//
// Every run gets a fresh directory, its own process group, resource limits, no network, a
// wall-clock timeout that kills everything it started, and cleanup; at most `concurrency` runs
// execute at once (default: one per core). Outcomes are values, never exceptions.
import { SlotLimiter } from './concurrency.ts';
import { defaultConcurrency, detectIsolation } from './isolation.ts';
import { python } from './languages/python.ts';
import { runIsolated } from './run-isolated.ts';
import type { LanguageRunner, RunOutcome, RunResult, RunSpec, SandboxLimits } from './types.ts';

export type { LanguageRunner, RunOutcome, RunResult, RunSpec, RunStatus, SandboxLimits } from './types.ts';
export { defaultLimits } from './limits.ts';
export { detectIsolation, processesOwnedBy, sandboxUidRange, type Isolation, type IsolationMode } from './isolation.ts';
export { python, pythonInterpreter } from './languages/python.ts';
export { SlotLimiter } from './concurrency.ts';
export { memoryCgroupBase } from './memory-cgroup.ts';

let sharedLimiter: SlotLimiter | null = null;

/** The process-wide limiter used when a call passes none. */
export function sandboxLimiter(): SlotLimiter {
  sharedLimiter ??= new SlotLimiter(Number(process.env.MARFT_SANDBOX_CONCURRENCY) || defaultConcurrency());
  return sharedLimiter;
}

/** Sets how many runs may execute at once in this process (affects runs started afterwards). */
export function setSandboxConcurrency(n: number): void {
  sharedLimiter = new SlotLimiter(n);
}

export interface RunProgramOptions {
  source: string;
  stdin?: string;
  timeoutMs: number;
  limits?: Partial<SandboxLimits>;
  /** Extra files placed beside the program (relative names). */
  files?: Record<string, string>;
  limiter?: SlotLimiter;
}

/** Runs any prepared command (RunSpec) under the limiter; used by harnesses that need fd 3. */
export function runSandboxed(spec: RunSpec, limiter: SlotLimiter = sandboxLimiter()): Promise<RunResult> {
  return limiter.run(() => runIsolated(spec));
}

/** Runs a program of any registered language. */
export async function runProgram(language: LanguageRunner, opts: RunProgramOptions): Promise<RunOutcome> {
  const prepared = language.prepare(opts.source);
  const spec: RunSpec = { files: { ...opts.files, ...prepared.files }, argv: prepared.argv, timeoutMs: opts.timeoutMs };
  if (opts.stdin !== undefined) spec.stdin = opts.stdin;
  if (opts.limits) spec.limits = opts.limits;
  const { channel: _unused, ...outcome } = await runSandboxed(spec, opts.limiter);
  return outcome;
}

/** Runs a Python program (the source becomes main.py in a fresh directory). */
export function runPython(opts: RunProgramOptions): Promise<RunOutcome> {
  return runProgram(python, opts);
}

/** 'namespaces' when runs are fully isolated, else 'rlimits' (see isolation.ts). */
export function isolationMode(): 'namespaces' | 'rlimits' {
  return detectIsolation().mode;
}
