// The vLLM server's processes (the API server, its engine core, its workers) as one process group
// that ends when marft ends, however marft ends. stop() ends the group on a normal exit, but a run
// that fails with an exception (a consistency check tripping), a killed marft or a crash never gets
// there, and the server — started detached, in its own group, so that stop() reaches its children —
// would live on holding its memory and cores. So the server is started through a small Python
// prelude that forks a watcher into the group and then becomes the server (exec): the watcher reads
// its stdin, a pipe whose only writer is marft, and when that pipe closes (marft exited or died, even
// by SIGKILL) it sends the group SIGTERM, waits for the server to exit (30 s at most) and sends
// what is left of the group SIGKILL. stop()'s own SIGTERM ends the watcher with the rest.
import { spawn, type ChildProcess } from 'node:child_process';

/** Seconds between the watcher's SIGTERM and its SIGKILL, as stop() waits. */
export const WATCHER_GRACE_S = 30;

const PRELUDE = `
import os, signal, sys, time
leader = os.getpid()
if os.fork() == 0:
    try:
        while os.read(0, 65536):
            pass
    except OSError:
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.killpg(0, signal.SIGTERM)
    deadline = time.time() + ${WATCHER_GRACE_S}
    while time.time() < deadline:
        try:
            os.kill(leader, 0)
        except OSError:
            break
        time.sleep(0.5)
    os.killpg(0, signal.SIGKILL)
os.execv(sys.executable, [sys.executable] + sys.argv[1:])
`;

/**
 * Starts `python ARGS…` as the leader of a new process group that is ended when this process ends.
 * stdout and stderr are pipes; stdin is the watcher's pipe (nothing is written to it).
 */
export function spawnServerGroup(python: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(python, ['-c', PRELUDE, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
}

/** Becomes the program named by its first argument: what spawnProgramGroup hands the prelude. */
const EXEC_PROGRAM = 'import os, sys; os.execv(sys.argv[1], sys.argv[1:])';

/**
 * spawnServerGroup for a server that is a program (llama.cpp's llama-server), not a Python module:
 * `python` runs the prelude (its watcher) and then becomes `program ARGS…`, leading the same group.
 */
export function spawnProgramGroup(python: string, program: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawnServerGroup(python, ['-c', EXEC_PROGRAM, program, ...args], env);
}

/**
 * Ends a group that spawnServerGroup started: SIGTERM to the whole group, SIGKILL to what is left after
 * WATCHER_GRACE_S seconds; resolves when the leader has exited (at once when it already has).
 */
export async function stopServerGroup(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  try { process.kill(-child.pid, 'SIGTERM'); } catch { return; }
  const killed = setTimeout(() => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } }, WATCHER_GRACE_S * 1000);
  await exited;
  clearTimeout(killed);
}

export interface ServingWait {
  /** The server's name in messages ("vLLM", "llama-server"). */
  what: string;
  /** Said after "could not be started" (e.g. " with PYTHON"). */
  startedWith?: string;
  /** A GET that answers 200 once the server serves. */
  readyUrl: string;
  timeoutMs: number;
  pollMs: number;
  /** The server's last lines of output, to explain a failure. */
  lastOutput: () => string;
}

/**
 * Waits until `child` (started by spawnServerGroup) answers `readyUrl` with 200. Throws one line when it
 * cannot be spawned, exits while starting, or does not answer in time (then its group is stopped first).
 */
export async function waitUntilServing(child: ChildProcess, w: ServingWait): Promise<void> {
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  const deadline = Date.now() + w.timeoutMs;
  for (;;) {
    const failed = await Promise.race([spawnError, new Promise<null>((r) => setTimeout(() => r(null), w.pollMs))]);
    if (failed) throw new Error(`${w.what} could not be started${w.startedWith ?? ''}: ${failed.message}`);
    if (child.exitCode !== null) throw new Error(`${w.what} exited with code ${child.exitCode} while starting: ${w.lastOutput()}`);
    try {
      if ((await fetch(w.readyUrl, { signal: AbortSignal.timeout(5000) })).ok) return;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) {
      await stopServerGroup(child);
      throw new Error(`${w.what} did not answer within ${Math.round(w.timeoutMs / 1000)} s: ${w.lastOutput()}`);
    }
  }
}
