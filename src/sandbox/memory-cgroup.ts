// Optional memory cgroup per run (cgroup v1 memory controller, where this process may create
// children): bounds the memory of all of a run's processes together. RLIMIT_AS bounds each
// process only, so without it 32 processes of 1 GiB could exhaust the host. Where cgroup v1's
// memory controller is not writable (cgroup v2 hosts, containers), runs go without it.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';

let base: string | null | undefined;

/** This process's directory for run cgroups (created once, removed at exit), or null. */
export function memoryCgroupBase(): string | null {
  if (base !== undefined) return base;
  base = null;
  if (process.env.MARFT_SANDBOX_CGROUP === '0' || process.platform !== 'linux') return base;
  try {
    const line = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find((l) => (l.split(':')[1] ?? '').split(',').includes('memory'));
    if (!line) return base;
    const own = line.split(':').slice(2).join(':');
    const parent = `/sys/fs/cgroup/memory${own === '/' ? '' : own}`;
    removeStale(parent);
    const dir = `${parent}/marft-sandbox-${process.pid}`;
    if (!existsSync(dir)) mkdirSync(dir);
    if (!existsSync(`${dir}/memory.limit_in_bytes`)) return base;
    process.on('exit', () => {
      try {
        rmdirSync(dir);
      } catch {
        // a run cgroup still busy: the kernel frees it when empty
      }
    });
    base = dir;
  } catch {
    base = null;
  }
  return base;
}

/** Removes the (empty) cgroups left by marft processes that died without cleaning up. */
function removeStale(parent: string): void {
  for (const name of readdirSync(parent)) {
    const m = /^marft-sandbox-(\d+)$/.exec(name);
    if (!m || Number(m[1]) === process.pid || existsSync(`/proc/${m[1]}`)) continue;
    try {
      for (const run of readdirSync(`${parent}/${name}`)) if (run.startsWith('run-')) rmdirSync(`${parent}/${name}/${run}`);
      rmdirSync(`${parent}/${name}`);
    } catch {
      // still in use (a run outlived its controller for a moment): a later process retries
    }
  }
}

/** A fresh cgroup limited to `memoryBytes` for the run of `uid`; null when unavailable. */
export async function createRunCgroup(uid: number, memoryBytes: number): Promise<string | null> {
  const root = memoryCgroupBase();
  if (!root) return null;
  const dir = `${root}/run-${uid}`;
  try {
    await mkdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return null;
  }
  try {
    await writeFile(`${dir}/memory.limit_in_bytes`, String(Math.floor(memoryBytes)));
    // With swap accounting, memory + swap gets the same bound (no escaping into swap).
    if (existsSync(`${dir}/memory.memsw.limit_in_bytes`)) await writeFile(`${dir}/memory.memsw.limit_in_bytes`, String(Math.floor(memoryBytes)));
    return dir;
  } catch {
    await removeRunCgroup(dir);
    return null;
  }
}

/** How many processes of the run the kernel killed for exceeding the cgroup's limit. */
export async function oomKills(dir: string): Promise<number> {
  try {
    const m = /oom_kill (\d+)/.exec(await readFile(`${dir}/memory.oom_control`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Removes a run cgroup once its last process is gone (retries briefly while the kernel reaps). */
export async function removeRunCgroup(dir: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      await rmdir(dir);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
