// Foreseeing an allocation that cannot fit (issue 22). V8 hands out a typed array of any size up to
// its limit at once and the pages are only taken when they are written, so a key/value cache or a
// logits buffer larger than the machine's free memory "succeeds" and the process is later killed by
// the kernel's OOM killer (a kill -9: no message, the step lost). The embedded engine therefore asks
// before its two allocations that grow with the configured batch, the sampling batch's key/value cache
// (sequences × (longest prompt + maxNewTokens) × layers × 2 × kv heads × head dim floats) and a
// micro-batch's logits (scored tokens × vocabulary floats), and refuses one larger than the memory
// available, with an error the run's step guard reports as out of memory in one line
// (src/runs/memory-errors.ts) naming the keys to lower.
//
// An allocation of a size granted before is never refused: the earlier buffer of that purpose may
// still be held (the buffer pool keeps logits buffers; a finished sampling batch's cache awaits the
// garbage collector), so the memory it occupies counts as available for its successor.
//
// Available memory: the least of the kernel's MemAvailable (/proc/meminfo), the cgroup's room
// (memory.max − memory.current, cgroup v2), and MARFT_MEMORY_LIMIT_MB when set. Where none can be
// read (not Linux) nothing is refused. MARFT_MEMORY_LIMIT_MB=off turns the check off.
import { readFileSync } from 'node:fs';

const MB = 1024 * 1024;

function readNumber(path: string, pattern?: RegExp): number | null {
  try {
    const text = readFileSync(path, 'utf8');
    const m = pattern ? pattern.exec(text) : /^\s*(\d+)\s*$/.exec(text);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Bytes this process may still allocate, or null when there is no limit to check against. */
export function availableMemoryBytes(env: NodeJS.ProcessEnv = process.env): number | null {
  const limit = env.MARFT_MEMORY_LIMIT_MB?.trim();
  if (limit === 'off') return null;
  const bounds: number[] = [];
  if (limit !== undefined && limit !== '') {
    const mb = Number(limit);
    if (!Number.isFinite(mb) || mb <= 0) throw new Error(`MARFT_MEMORY_LIMIT_MB: got ${JSON.stringify(limit)}, expected a positive number of megabytes or 'off'`);
    // The limit is on the whole process: what it holds already counts against it.
    bounds.push(mb * MB - process.memoryUsage().rss);
  }
  const kb = readNumber('/proc/meminfo', /^MemAvailable:\s+(\d+) kB$/m);
  if (kb !== null) bounds.push(kb * 1024);
  const max = readNumber('/sys/fs/cgroup/memory.max');
  const current = readNumber('/sys/fs/cgroup/memory.current');
  if (max !== null && current !== null) bounds.push(max - current);
  return bounds.length === 0 ? null : Math.max(0, Math.min(...bounds));
}

const mb = (bytes: number): string => `${Math.ceil(bytes / MB).toLocaleString('en-US')} MB`;

/** The largest allocation granted so far, per purpose (see the header). */
const granted = new Map<string, number>();

/**
 * Throws, before anything is allocated, when `bytes` for `what` exceed the memory available. The
 * message says "out of memory" (what the step guard recognises) and `sizedBy`, the quantities behind
 * the size, so that the one line says which setting to lower.
 */
export function reserveMemory(what: string, bytes: number, sizedBy: string, env: NodeJS.ProcessEnv = process.env): void {
  const before = granted.get(what) ?? 0;
  if (bytes <= before) return;
  const free = availableMemoryBytes(env);
  const available = free === null ? null : free + before;
  if (available === null || bytes <= available) {
    granted.set(what, bytes);
    return;
  }
  throw new RangeError(`out of memory, foreseen: ${what} needs ${mb(bytes)} (${sizedBy}) and ${mb(available)} are available`);
}
