// Whether a process id on this machine is running: used to tell a live lock holder or temp-file
// writer from one that crashed (kill -9 leaves its lock and temp files behind). A process id alone
// can mislead: after the holder died, the id may be given to another process (or, after a reboot, to
// anything). So a lock also records the holder's start time and the machine's boot id (Linux:
// /proc/PID/stat and /proc/sys/kernel/random/boot_id), and a live process with that id but another
// start time, or a boot id that changed, is not the holder.
import { readFileSync } from 'node:fs';

export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0); // signal 0: existence and permission check only
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When process `pid` started, in clock ticks since boot (field 22 of /proc/PID/stat), as a string;
 * null where /proc is not available or the process is gone. Two processes that had the same id at
 * different times have different start times.
 */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (the command name, in parentheses) may itself hold spaces and parentheses: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = fields[19]; // field 22 overall; fields[0] is field 3
    return start && /^\d+$/.test(start) ? start : null;
  } catch {
    return null;
  }
}

/** This boot of the machine (Linux); null elsewhere. */
export function bootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}
