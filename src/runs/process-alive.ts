// Whether a process id on this machine is running: used to tell a live lock holder or temp-file
// writer from one that crashed (kill -9 leaves its lock and temp files behind).

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
