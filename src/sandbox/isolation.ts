// How a run is isolated, decided once per process by probing what this machine allows.
//
// 'namespaces' (root with util-linux's unshare, setpriv and prlimit; what CI and our machines have):
//   unshare --pid --fork --kill-child --net --mount --ipc --uts --mount-proc runs INIT_SCRIPT as
//   PID 1 of a new PID namespace. The script (still root) mounts a private size-limited tmpfs,
//   copies the run's files into /tmp/work on it, covers the other world-writable directories with
//   tiny tmpfs mounts, then starts the program as an unprivileged uid that belongs to this run
//   alone, under prlimit. Consequences:
//   - no network: the new network namespace has only a loopback device, and it is down;
//   - the process limit binds: RLIMIT_NPROC counts the processes of a uid, and no other run uses it;
//   - nothing outlives the run: when PID 1 exits or is killed, the kernel kills every process in
//     the namespace, including children that called setsid() to leave the process group;
//   - writes land on the run's tmpfs (size-limited, gone with the namespace) or fail.
// 'rlimits' (anything else): the program runs under prlimit (when present) in its own process
//   group, without network or PID isolation; a one-time message on stderr says so. As root it
//   still runs as the run's own unprivileged uid (setpriv), so the process limit binds.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import type { SandboxLimits } from './types.ts';

export type IsolationMode = 'namespaces' | 'rlimits';

export interface Isolation {
  mode: IsolationMode;
  /** Why namespaces are not used (null in 'namespaces' mode). */
  reason: string | null;
  unshare: string | null;
  setpriv: string | null;
  prlimit: string | null;
  timeout: string | null;
}

/** Working directory of the program inside the namespace: the root of the run's private tmpfs. */
export const SANDBOX_WORKDIR = '/tmp';

// World-writable host directories, covered in the namespace by tiny private tmpfs mounts.
const SHARED_WRITABLE_DIRS = ['/var/tmp', '/run/lock', '/dev/shm', '/dev/mqueue'];

/**
 * The mounts of a run, as an fstab that the init script mounts with one `mount -a` (every exec
 * costs start-up time): the covers, then the run's tmpfs on /tmp, owned by the run's uid.
 */
export function sandboxFstab(uid: number, limits: SandboxLimits): string {
  const lines = SHARED_WRITABLE_DIRS.filter((d) => existsSync(d)).map((d) => `marft-sandbox ${d} tmpfs size=65536,mode=1777,nosuid,nodev 0 0`);
  lines.push(`marft-sandbox ${SANDBOX_WORKDIR} tmpfs size=${Math.floor(limits.diskBytes)},mode=0700,uid=${uid},gid=${uid},nosuid,nodev 0 0`);
  return `${lines.join('\n')}\n`;
}

// $1 = host staging directory (holds fstab and src/), $2 = the run's memory cgroup or '', then
// the command (setpriv ... prlimit ... argv). The shell first joins the cgroup (every process it
// starts inherits it; a failure only loses that bound), then enters src/ before /tmp is covered (its working directory stays reachable), mounts
// the run's filesystems, and copies the files onto the new /tmp; they stay root's, so the program
// can read but not replace them.
const INIT_SCRIPT = `set -e
D="$1"; CG="$2"; shift 2
if [ -n "$CG" ]; then echo 0 > "$CG/cgroup.procs" || true; fi
cd "$D/src"
mount -a -T "$D/fstab"
cp -R . ${SANDBOX_WORKDIR}/
cd ${SANDBOX_WORKDIR}
set +e
"$@"
exit $?
`;

function which(name: string): string | null {
  for (const dir of ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin']) {
    const p = `${dir}/${name}`;
    if (existsSync(p)) return p;
  }
  return null;
}

let cached: Isolation | null = null;
let warned = false;

/** Probes once (a few milliseconds) and caches the answer for the life of the process. */
export function detectIsolation(): Isolation {
  if (cached) return cached;
  const unshare = which('unshare');
  const setpriv = which('setpriv');
  const prlimit = which('prlimit');
  const base = { unshare, setpriv, prlimit, timeout: which('timeout') };
  let reason: string | null = null;
  if (process.env.MARFT_SANDBOX_ISOLATION === 'rlimits') reason = 'MARFT_SANDBOX_ISOLATION=rlimits';
  else if (process.platform !== 'linux') reason = `platform ${process.platform} is not Linux`;
  else if (process.getuid?.() !== 0) reason = 'not running as root (user, PID, network and mount namespaces need it)';
  else if (!unshare || !setpriv || !prlimit) reason = 'unshare, setpriv or prlimit (util-linux) not found';
  else {
    const probe = spawnSync(unshare, [...unshareFlags(), '/bin/sh', '-c', 'mount -t tmpfs -o size=65536 marft-probe /tmp && setpriv --reuid=65534 --regid=65534 --clear-groups true'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 10_000,
    });
    if (probe.status !== 0) reason = `namespaces unavailable here (${probe.stderr?.toString().trim().split('\n')[0] || `exit ${probe.status}`})`;
  }
  cached = { mode: reason ? 'rlimits' : 'namespaces', reason, ...base };
  return cached;
}

export function warnOnceIfDegraded(iso: Isolation): void {
  if (iso.mode === 'namespaces' || warned) return;
  warned = true;
  const who = fallbackDropsPrivileges(iso) ? 'as an unprivileged uid with resource limits' : 'with resource limits (no process-count limit)';
  process.stderr.write(
    `marft sandbox: ${iso.reason}; running programs ${who} in their own process group only ` +
      `(no network isolation; children that call setsid() may outlive a timeout)\n`,
  );
}

function unshareFlags(): string[] {
  return ['--pid', '--fork', '--kill-child', '--net', '--mount', '--ipc', '--uts', '--mount-proc'];
}

function prlimitFlags(limits: SandboxLimits, withProcesses: boolean): string[] {
  const flags = [
    // SIGXCPU at the soft limit (status timeout); SIGKILL a second later if the program ignores it.
    `--cpu=${Math.ceil(limits.cpuSeconds)}:${Math.ceil(limits.cpuSeconds) + 1}`,
    `--as=${Math.floor(limits.addressSpaceBytes)}`,
    `--fsize=${Math.floor(limits.fileSizeBytes)}`,
    `--nofile=${Math.floor(limits.openFiles)}`,
    '--core=0',
  ];
  if (withProcesses) flags.push(`--nproc=${Math.floor(limits.processes)}`);
  return flags;
}

// A uid per running program, distinct between node processes (test files run in parallel), so
// that RLIMIT_NPROC counts one run's processes only. Allocated per run rather than per limiter
// slot: two limiters in one process must not hand out the same uid. No passwd entry is needed.
const UID_BASE = 200_000 + (process.pid % 20_000) * 1024;
const UIDS_PER_PROCESS = 1024;
const uidsInUse = new Set<number>();

/** Takes the lowest free sandbox uid; give it back with releaseSandboxUid once the run is over. */
export function acquireSandboxUid(): number {
  for (let i = 0; i < UIDS_PER_PROCESS; i++) {
    if (!uidsInUse.has(i)) {
      uidsInUse.add(i);
      return UID_BASE + i;
    }
  }
  throw new Error(`marft sandbox: more than ${UIDS_PER_PROCESS} programs running at once in one process`);
}

export function releaseSandboxUid(uid: number): void {
  uidsInUse.delete(uid - UID_BASE);
}

/** The uids this process's runs use: [first, end). Any process owned by one is a sandboxed program. */
export function sandboxUidRange(): { first: number; end: number } {
  return { first: UID_BASE, end: UID_BASE + UIDS_PER_PROCESS };
}

/** Pids of live processes owned by uids in [first, end) (reads /proc; Linux only). */
export async function processesOwnedBy(first: number, end: number): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const st = await stat(`/proc/${name}`);
      if (st.uid >= first && st.uid < end) pids.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/**
 * The command line that runs `argv` isolated as `uid`; `stagingDir` holds src/ (the files) and,
 * in 'namespaces' mode, fstab (sandboxFstab).
 * In the namespace, coreutils' timeout (when present) is a backstop that ends the program a few
 * seconds after `timeoutMs` even if the controller itself died meanwhile.
 */
export function isolatedCommand(iso: Isolation, stagingDir: string, uid: number, limits: SandboxLimits, timeoutMs: number, argv: string[], cgroup: string | null = null): string[] {
  if (iso.mode === 'namespaces') {
    const backstop = iso.timeout ? [iso.timeout, '-s', 'KILL', String(Math.ceil(timeoutMs / 1000) + 5)] : [];
    return [
      iso.unshare!, ...unshareFlags(), '/bin/sh', '-c', INIT_SCRIPT, 'marft-sandbox-init', stagingDir, cgroup ?? '',
      ...backstop,
      iso.setpriv!, `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--no-new-privs',
      iso.prlimit!, ...prlimitFlags(limits, true), '--', ...argv,
    ];
  }
  // Fallback. As root with setpriv, the program still runs as the run's own uid (so it can neither
  // signal nor write what belongs to others, and the process limit binds); otherwise as we are.
  const dropPrivileges = fallbackDropsPrivileges(iso) ? [iso.setpriv!, `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--no-new-privs'] : [];
  const limit = iso.prlimit ? [iso.prlimit, ...prlimitFlags(limits, dropPrivileges.length > 0), '--'] : [];
  return [...dropPrivileges, ...limit, ...argv];
}

/** Whether 'rlimits' mode runs programs as the run's uid (root with setpriv) rather than as marft's user. */
export function fallbackDropsPrivileges(iso: Isolation): boolean {
  return iso.mode === 'rlimits' && iso.setpriv !== null && process.getuid?.() === 0;
}

/** Default concurrency: one run per core. */
export function defaultConcurrency(): number {
  return availableParallelism();
}
