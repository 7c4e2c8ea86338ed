// The vLLM server's process group ends with marft (src/engine/vllm/server-process.ts), without vLLM:
// a stand-in Python "server" that forks a child (as vLLM forks its engine core) is started through the
// same prelude. When the Node process that started it is killed with SIGKILL (no exit handler runs),
// the whole group — server, child and watcher — is gone within seconds; when the server exits by
// itself while marft lives (vLLM failing at start-up), the child it leaves behind is ended too.
// Linux only (it reads /proc); needs a Python: the torch engine's venv, which CI always has.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnServerGroup, stopServerGroup } from '../../src/engine/vllm/server-process.ts';
import { defaultTorchPython } from '../../src/engine/torch/worker-process.ts';
import { repoRoot } from './oracle-helpers.ts';

const python = process.env.MARFT_TORCH_PYTHON ?? defaultTorchPython;
const skip = process.platform !== 'linux' ? 'reads /proc (Linux only)' : !existsSync(python) ? `no ${python}: run scripts/setup.sh` : false;

// Prints the pid of the child it forks, then both sleep: a server that would never exit by itself.
const SERVER = 'import os, time\npid = os.fork()\nif pid: print(pid, flush=True)\ntime.sleep(600)';

/** Live (not zombie) processes whose process group is `pgid`. */
function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try { stat = readFileSync(`/proc/${name}/stat`, 'utf8'); } catch { continue; }
    // pid (comm) state ppid pgrp ...: comm may hold spaces, so read after its closing parenthesis.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z') out.push(Number(name));
  }
  return out;
}

async function waitUntilEmpty(pgid: number, ms: number): Promise<number> {
  const start = Date.now();
  while (groupMembers(pgid).length > 0) {
    if (Date.now() - start > ms) return -1;
    await new Promise((r) => setTimeout(r, 100));
  }
  return Date.now() - start;
}

test('vLLM server process group: a SIGKILLed marft takes the server, its child and the watcher with it', { skip, timeout: 60_000 }, async () => {
  const module = join(repoRoot, 'src/engine/vllm/server-process.ts');
  const code = `import { spawnServerGroup } from ${JSON.stringify(module)};
const c = spawnServerGroup(${JSON.stringify(python)}, ['-c', ${JSON.stringify(SERVER)}], process.env);
console.log(c.pid); c.stdout.pipe(process.stdout); setInterval(() => {}, 1000);`;
  const marft = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((r) => marft.once('exit', r));
  let out = '';
  marft.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  let leader = 0;
  try {
    const deadline = Date.now() + 30_000;
    while (out.trim().split('\n').length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const [server, child] = out.trim().split('\n').map(Number);
    assert.ok(server && child, `the stand-in server did not start: ${out}`);
    leader = server;
    const members = groupMembers(leader);
    // The server (its pid, the group's id), its child and the watcher.
    assert.equal(members.length, 3, `group ${leader}: ${members}`);
    assert.ok(members.includes(child));
    marft.kill('SIGKILL');
    await exited;
    const took = await waitUntilEmpty(leader, 10_000);
    assert.ok(took >= 0, `group ${leader} still holds ${groupMembers(leader)} 10 s after its starter was killed`);
    console.log(`server group gone ${took} ms after marft's SIGKILL`);
  } finally {
    // What this test started, whatever failed above.
    if (marft.exitCode === null && marft.signalCode === null) marft.kill('SIGKILL');
    if (leader) try { process.kill(-leader, 'SIGKILL'); } catch { /* gone */ }
  }
});

test('vLLM server process group: a server that exits by itself leaves no child behind while marft lives', { skip, timeout: 60_000 }, async () => {
  // The server forks a child and exits at once, as vLLM may when it fails to start.
  const server = spawnServerGroup(python, ['-c', 'import os, time\nif os.fork(): os._exit(3)\ntime.sleep(600)'], process.env);
  try {
    const code = await new Promise((r) => server.once('exit', r));
    assert.equal(code, 3);
    const took = await waitUntilEmpty(server.pid!, 10_000);
    assert.ok(took >= 0, `group ${server.pid} still holds ${groupMembers(server.pid!)}`);
  } finally {
    try { process.kill(-server.pid!, 'SIGKILL'); } catch { /* gone */ }
  }
});

test('stopServerGroup ends the server, its child and the watcher, and returns at once for a group already gone', { skip, timeout: 60_000 }, async () => {
  const server = spawnServerGroup(python, ['-c', SERVER], process.env);
  const leader = server.pid!;
  try {
    let out = '';
    server.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
    const deadline = Date.now() + 30_000;
    while (!out.includes('\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const child = Number(out.trim());
    assert.ok(child > 0, `the stand-in server did not start: ${out}`);
    assert.equal(groupMembers(leader).length, 3, `group ${leader}: ${groupMembers(leader)}`);
    await stopServerGroup(server);
    assert.ok(server.exitCode !== null || server.signalCode !== null, 'the leader has exited when stopServerGroup resolves');
    assert.ok(await waitUntilEmpty(leader, 10_000) >= 0, `group ${leader} still holds ${groupMembers(leader)} after stopServerGroup`);
    const again = Date.now();
    await stopServerGroup(server);
    assert.ok(Date.now() - again < 1000, 'a second stop returns at once');
  } finally {
    try { process.kill(-leader, 'SIGKILL'); } catch { /* gone */ }
  }
});
