// Runs `marft` as a user does (a child process through bin/marft.mjs), several at once, and checks
// that a user's mistake reads as the project promises: exit code 2, one line on stderr, no stack trace.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';

const cli = new URL('../../bin/marft.mjs', import.meta.url).pathname;

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export interface CliCall {
  args: string[];
  /** Working folder (default: this process's). */
  cwd?: string;
  /** Standard input (default: none, closed). */
  stdin?: string;
}

export function runCli(call: CliCall): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...call.args], { cwd: call.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(call.stdin ?? '');
  });
}

/** Runs the calls, `parallel` at a time (each is mostly Node's start-up), results in call order. */
export async function runAll(calls: CliCall[], parallel = 4): Promise<CliResult[]> {
  const results: CliResult[] = new Array(calls.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < calls.length) {
      const i = next++;
      results[i] = await runCli(calls[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, calls.length) }, worker));
  return results;
}

/** Exit code 2, exactly one line on stderr matching `message`, no stack trace. */
export function assertUserError(r: CliResult, message: RegExp, what: string): void {
  assert.equal(r.status, 2, `${what}: exit code ${r.status}; stderr: ${r.stderr}`);
  assert.doesNotMatch(r.stderr, /\n\s+at /, `${what}: a stack trace: ${r.stderr}`);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `${what}: ${lines.length} lines on stderr: ${r.stderr}`);
  assert.match(lines[0]!, message, what);
}

/**
 * Runs `marft ARGS` inside this process (no Node start-up: for long tables of cases) and returns what
 * a user would see. A stack trace here is a rejected promise, which fails the calling test.
 */
export async function runInProcess(args: string[]): Promise<CliResult> {
  const { main } = await import('../../src/cli/main.ts');
  const out: string[] = [];
  const err: string[] = [];
  const { log, error } = console;
  console.log = (...xs: unknown[]) => void out.push(`${xs.join(' ')}\n`);
  console.error = (...xs: unknown[]) => void err.push(`${xs.join(' ')}\n`);
  try {
    const status = await main(args);
    return { status, stdout: out.join(''), stderr: err.join('') };
  } finally {
    console.log = log;
    console.error = error;
  }
}
