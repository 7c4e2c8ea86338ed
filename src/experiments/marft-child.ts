// Runs one `marft train` or `marft eval` as a child process: the experiment trains and scores through
// exactly the commands a user would type (same code, same run-folder guarantees), and a crash or the
// memory of one run never reaches the next. The child's stderr passes through; its last stdout line
// is the command's JSON result.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ExperimentError } from './experiment-error.ts';

const CLI = fileURLToPath(new URL('../../bin/marft.mjs', import.meta.url));

/** The child now running, so that an interrupted experiment can stop it rather than leave it orphaned. */
let current: ChildProcess | null = null;
let stopRequested: NodeJS.Signals | null = null;

/** An experiment stopped by a signal: its child was stopped too, and no further child starts. */
export class ExperimentInterrupted extends Error {
  override name = 'ExperimentInterrupted';
  constructor(readonly signal: NodeJS.Signals) {
    super(`stopped by ${signal}`);
  }
}

/**
 * Stops the running child with `signal` and starts no other: the experiment's own promise then fails
 * with ExperimentInterrupted, so its locks are released on the way out (docs/experiments.md).
 */
export function interruptExperiment(signal: NodeJS.Signals): void {
  stopRequested = signal;
  current?.kill(signal);
}

/** Runs `marft ARGS`; resolves with the JSON object of its last stdout line, or throws one line naming `what`. */
export function runMarft(what: string, args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    if (stopRequested) {
      reject(new ExperimentInterrupted(stopRequested));
      return;
    }
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    current = child;
    let stdout = '';
    let lastErr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      process.stderr.write(d);
      const lines = d.split('\n').filter((l) => l.trim() !== '');
      if (lines.length > 0) lastErr = lines[lines.length - 1]!;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      current = null;
      if (stopRequested) {
        reject(new ExperimentInterrupted(stopRequested));
        return;
      }
      if (code !== 0) {
        // A command's own failure ends with its one-line message; a crash's last line is the tail of
        // a native stack, which says nothing: it is above on stderr, and the rerun continues.
        const why = signal
          ? `crashed (${signal}; its output is above); run the experiment again to continue`
          : `failed (exit ${code})${lastErr ? `: ${lastErr.replace(/^marft \w+: /, '')}` : ''}`;
        reject(new ExperimentError(`${what}: marft ${args[0]} ${why}`));
        return;
      }
      const last = stdout.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(last) as Record<string, unknown>);
      } catch {
        reject(new Error(`${what}: marft ${args[0]} printed no JSON result line (last line: ${last.slice(0, 200)})`));
      }
    });
  });
}
