// Default limits for a sandboxed run; callers override any subset.
import type { SandboxLimits } from './types.ts';

const MiB = 1024 * 1024;

/** CPU seconds follow the wall-clock timeout (plus one second) unless set explicitly. */
export function defaultLimits(timeoutMs: number): SandboxLimits {
  return {
    cpuSeconds: Math.max(1, Math.ceil(timeoutMs / 1000) + 1),
    addressSpaceBytes: 1024 * MiB,
    memoryBytes: 2048 * MiB,
    processes: 32,
    fileSizeBytes: 16 * MiB,
    openFiles: 64,
    diskBytes: 64 * MiB,
    outputBytes: 4 * MiB,
    stderrExcerptChars: 2000,
  };
}

export function resolveLimits(timeoutMs: number, overrides: Partial<SandboxLimits> = {}): SandboxLimits {
  const limits = { ...defaultLimits(timeoutMs), ...overrides };
  for (const [key, value] of Object.entries(limits)) {
    if (!Number.isFinite(value) || value <= 0) throw new RangeError(`sandbox limit ${key} must be a positive number, got ${value}`);
  }
  return limits;
}
