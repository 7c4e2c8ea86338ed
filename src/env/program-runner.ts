// How environments run agents' programs: a function, so that tests and other languages can swap it.
// The default runs Python in the sandbox (src/sandbox), whose outcomes are values, never exceptions.
import { runPython, type RunOutcome, type SandboxLimits, type SlotLimiter } from '../sandbox/index.ts';

export interface ProgramRun {
  source: string;
  stdin: string;
  timeoutMs: number;
}

export type ProgramRunner = (run: ProgramRun) => Promise<RunOutcome>;

export const defaultProgramRunner: ProgramRunner = (run) => runPython({ source: run.source, stdin: run.stdin, timeoutMs: run.timeoutMs });

/** A Python runner with its own limits or concurrency limiter. */
export function pythonRunner(opts: { limits?: Partial<SandboxLimits>; limiter?: SlotLimiter } = {}): ProgramRunner {
  return (run) => {
    const o: Parameters<typeof runPython>[0] = { source: run.source, stdin: run.stdin, timeoutMs: run.timeoutMs };
    if (opts.limits) o.limits = opts.limits;
    if (opts.limiter) o.limiter = opts.limiter;
    return runPython(o);
  };
}

/** The last `max` characters of an error text (tracebacks end with what matters), trimmed. */
export function excerpt(text: string, max = 800): string {
  const t = text.trim();
  return t.length <= max ? t : `...${t.slice(-max)}`;
}

/** Shortens a program's input or output for a feedback line. */
export function clip(text: string, max = 400): string {
  return text.length <= max ? text : `${text.slice(0, max)}... (${text.length - max} more characters)`;
}
