// The sandbox's public types (spec section 3; docs/sandbox.md).
// A run's outcome is always a value: nothing a sandboxed program does turns into an exception
// in the caller.

/** Per-run resource limits. Each applies to every process the program starts. */
export interface SandboxLimits {
  /** RLIMIT_CPU: CPU seconds per process (the wall-clock timeout is separate). */
  cpuSeconds: number;
  /** RLIMIT_AS: address space per process, in bytes. */
  addressSpaceBytes: number;
  /**
   * Memory of all the run's processes together, in bytes, where a memory cgroup is available
   * (see memory-cgroup.ts); exceeding it gets a process killed and the run status 'memory'.
   */
  memoryBytes: number;
  /** Processes and threads the run may hold at once (RLIMIT_NPROC of a uid used by this run only). */
  processes: number;
  /** RLIMIT_FSIZE: the largest file a process may write, in bytes. */
  fileSizeBytes: number;
  /** RLIMIT_NOFILE: open file descriptors per process. */
  openFiles: number;
  /** Size of the run's private writable filesystem (its working directory and /tmp), in bytes. */
  diskBytes: number;
  /** stdout + stderr bytes after which the run is killed with status 'output_limit'. */
  outputBytes: number;
  /** Characters of stderr kept in the outcome (the tail, where tracebacks end). */
  stderrExcerptChars: number;
}

/**
 * How a run ended.
 * - ok: exited with status 0.
 * - runtime_error: exited with a non-zero status (exceptions, syntax errors, failed asserts).
 * - timeout: the wall-clock timeout or the CPU limit ran out.
 * - memory: the program ran out of its address-space limit.
 * - output_limit: it wrote more than `outputBytes`.
 * - killed: a signal ended it for another reason (segfault, a signal it sent itself, ...).
 */
export type RunStatus = 'ok' | 'runtime_error' | 'timeout' | 'memory' | 'output_limit' | 'killed';

export interface RunOutcome {
  status: RunStatus;
  /** The program's exit status, or null when a signal ended it. */
  exitCode: number | null;
  /** The signal that ended it (e.g. 'SIGKILL'), or null. */
  signal: string | null;
  /** Captured stdout (at most `outputBytes`). */
  stdout: string;
  /** The last `stderrExcerptChars` characters of stderr. */
  stderr: string;
  wallMs: number;
}

/** What a run needs, independent of the language: files to place in the working directory and a command. */
export interface RunSpec {
  /** File name (relative, no '..') -> content, written into a fresh working directory. */
  files: Record<string, string>;
  /** The command, run with the working directory as cwd; argv[0] must be an absolute path. */
  argv: string[];
  stdin?: string;
  timeoutMs: number;
  limits?: Partial<SandboxLimits>;
  /**
   * Text written to the program's fd 3 (a private, bidirectional channel) before it starts;
   * whatever the program writes back on fd 3 is returned as `channel`. Used by test harnesses.
   */
  channelInput?: string;
}

export interface RunResult extends RunOutcome {
  /** Everything written to fd 3 (only when `channelInput` was given), capped at `outputBytes`. */
  channel: string;
}

/** One language: how to turn a source text into a RunSpec. Python is the first; others plug in here. */
export interface LanguageRunner {
  readonly language: string;
  /** Main file name and the command that runs it, given the program's source. */
  prepare(source: string): { files: Record<string, string>; argv: string[] };
}
