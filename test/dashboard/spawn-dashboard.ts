// Starts `marft dashboard DIRS --port 0` as a user does (bin/marft.mjs in a child process) and
// reads the address it prints; stop() sends SIGTERM and waits for it to exit.
import { spawn } from 'node:child_process';

const cli = new URL('../../bin/marft.mjs', import.meta.url).pathname;

export interface RunningDashboard {
  url: string;
  firstLine: string;
  stop(): Promise<number | null>;
}

/** `cwd`: the working folder, which the runs' names are relative to. */
export function spawnDashboard(dirs: string[], cwd: string, timeoutMs = 60_000): Promise<RunningDashboard> {
  const child = spawn(process.execPath, [cli, 'dashboard', ...dirs, '--port', '0'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`marft dashboard printed no address in ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      const m = /^marft dashboard: (http:\/\/127\.0\.0\.1:\d+\/).*$/m.exec(stdout);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        url: m[1]!,
        firstLine: m[0],
        stop: async () => {
          child.kill('SIGTERM');
          return exited;
        },
      });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`marft dashboard exited (${code}) before printing its address; stderr: ${stderr}`));
    });
  });
}
