// Hostile programs: each must be contained, the controller (this process) must survive, and
// nothing may outlive the run: no process of the sandbox's uids, no staging directory, no file
// written outside the run's private filesystem.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { processesOwnedBy, runPython, sandboxUidRange, type RunOutcome } from '../../src/sandbox/index.ts';
import { isolatedTest, noMemoryCgroup, noNamespaces } from './isolated-test.ts';
const hostTmp = tmpdir();
let stagingRoot = '';

before(() => {
  // Staging directories of this file's runs go here, so that leftovers are easy to see.
  stagingRoot = mkdtempSync(join(hostTmp, 'marft-hostile-test-'));
  process.env.TMPDIR = stagingRoot;
});

after(() => {
  process.env.TMPDIR = hostTmp;
  rmSync(stagingRoot, { recursive: true, force: true });
});

async function assertNothingSurvives(): Promise<void> {
  const { first, end } = sandboxUidRange();
  assert.deepEqual(await processesOwnedBy(first, end), [], 'a sandboxed process outlived its run');
  assert.deepEqual(readdirSync(stagingRoot), [], 'a staging directory was left behind');
}

async function hostile(source: string, timeoutMs = 3000, extra: Partial<Parameters<typeof runPython>[0]> = {}): Promise<RunOutcome> {
  const t0 = performance.now();
  const o = await runPython({ source, timeoutMs, ...extra });
  assert.ok(performance.now() - t0 < timeoutMs + 8000, 'the run was not stopped in time');
  await assertNothingSurvives();
  return o;
}

isolatedTest('fork bomb: stopped by the process limit and the timeout, no process left', noNamespaces, async () => {
  const o = await hostile('import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass', 2000);
  assert.equal(o.status, 'timeout');
});

isolatedTest('the process limit binds (as root in CI too): forks beyond it fail', noNamespaces, async () => {
  const source = [
    'import os, time',
    'n = 0',
    'for _ in range(200):',
    '    try:',
    '        pid = os.fork()',
    '    except OSError:',
    '        break',
    '    if pid == 0:',
    '        time.sleep(30)',
    '        os._exit(0)',
    '    n += 1',
    'print(n)',
  ].join('\n');
  const o = await hostile(source, 10_000, { limits: { processes: 16 } });
  assert.equal(o.status, 'ok', o.stderr);
  // The program itself counts: at most 15 children; the sleeping children die with the run.
  assert.ok(Number(o.stdout) >= 1 && Number(o.stdout) <= 15, `forked ${o.stdout}`);
});

test('memory bomb: status memory', async () => {
  const o = await hostile('x = []\nwhile True:\n    x.append(bytearray(10**7))', 10_000, { limits: { addressSpaceBytes: 256 * 2 ** 20 } });
  assert.equal(o.status, 'memory');
});

isolatedTest('memory bomb spread over forked children: the memory cgroup of the run bounds the total', noMemoryCgroup, async () => {
  // Six children of 150 MiB each (all within the per-process limit) against a 320 MiB run bound.
  const source = [
    'import os, time',
    'kids = []',
    'for _ in range(6):',
    '    pid = os.fork()',
    '    if pid == 0:',
    '        block = bytearray(150 * 2**20)',
    '        time.sleep(1)',
    '        os._exit(0)',
    '    kids.append(pid)',
    'killed = sum(1 for pid in kids if os.waitpid(pid, 0)[1] & 0x7f == 9)',
    'print(killed)',
  ].join('\n');
  const o = await hostile(source, 20_000, { limits: { memoryBytes: 320 * 2 ** 20 } });
  if (o.status === 'ok') assert.ok(Number(o.stdout) >= 3, `only ${o.stdout.trim()} children were stopped`);
  else assert.equal(o.status, 'memory');
});

isolatedTest('disk bomb: one huge file is cut at the file-size limit, many files at the disk limit', noNamespaces, async () => {
  const big = await hostile('f = open("big", "wb")\nwhile True:\n    f.write(b"0" * 2**20)\n    f.flush()', 10_000, { limits: { fileSizeBytes: 4 * 2 ** 20 } });
  assert.equal(big.status, 'runtime_error');
  assert.match(big.stderr, /File too large/);
  const many = [
    'total = 0',
    'try:',
    '    for i in range(10**6):',
    '        with open(f"f{i}", "wb") as f:',
    '            f.write(b"0" * 2**20)',
    '        total += 2**20',
    'except OSError as e:',
    '    print(total, e.errno)',
  ].join('\n');
  const o = await hostile(many, 20_000, { limits: { diskBytes: 8 * 2 ** 20 } });
  assert.equal(o.status, 'ok', o.stderr);
  const [written, errno] = o.stdout.trim().split(' ').map(Number);
  assert.ok(written! <= 8 * 2 ** 20, `wrote ${written} bytes`);
  assert.equal(errno, 28); // ENOSPC
});

test('infinite loop in the main thread and in threads: timeout', async () => {
  assert.equal((await hostile('while True: pass', 800)).status, 'timeout');
  const threads = 'import threading\ndef spin():\n    while True: pass\nfor _ in range(4):\n    threading.Thread(target=spin).start()';
  assert.equal((await hostile(threads, 800)).status, 'timeout');
});

isolatedTest('endless thread creation is cut by the process limit', noNamespaces, async () => {
  // Daemon threads: the program ends as soon as thread creation fails.
  const o = await hostile('import threading, time\nwhile True:\n    threading.Thread(target=time.sleep, args=(100,), daemon=True).start()', 5000);
  assert.equal(o.status, 'runtime_error');
  assert.match(o.stderr, /can't start new thread/);
  // Non-daemon threads keep it alive after the error: the timeout ends it.
  const kept = await hostile('import threading, time\nwhile True:\n    threading.Thread(target=time.sleep, args=(100,)).start()', 1500);
  assert.equal(kept.status, 'timeout');
});

isolatedTest('writes outside the working directory never reach the host', noNamespaces, async () => {
  const tag = `marft-escape-${process.pid}-${Date.now()}`;
  const targets = [join('/tmp', tag), join('/var/tmp', tag), join('/dev/shm', tag), join(process.cwd(), tag), join(hostTmp, tag), `/${tag}`, `/root/${tag}`];
  const source = [
    'import os',
    `targets = ${JSON.stringify(targets)} + ["../" + ${JSON.stringify(tag)}]`,
    'ok = []',
    'for t in targets:',
    '    try:',
    '        open(t, "w").write("escaped")',
    '        ok.append(t)',
    '    except OSError:',
    '        pass',
    'print(len(ok))',
  ].join('\n');
  const o = await hostile(source, 10_000);
  assert.equal(o.status, 'ok', o.stderr);
  for (const t of targets) assert.equal(existsSync(t), false, `${t} was written on the host`);
  assert.equal(existsSync(join(process.cwd(), '..', tag)), false);
});

isolatedTest('network: no connection to the host loopback or the outside', noNamespaces, async () => {
  let connections = 0;
  const server: Server = createServer((s) => {
    connections++;
    s.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const source = [
    'import socket',
    'for host, port in [("127.0.0.1", ' + port + '), ("1.1.1.1", 53), ("8.8.8.8", 443)]:',
    '    s = socket.socket()',
    '    s.settimeout(1)',
    '    try:',
    '        s.connect((host, port))',
    '        print("connected", host)',
    '    except OSError as e:',
    '        print("blocked", host)',
  ].join('\n');
  const o = await hostile(source, 10_000);
  server.close();
  assert.equal(o.status, 'ok', o.stderr);
  assert.equal(o.stdout, 'blocked 127.0.0.1\nblocked 1.1.1.1\nblocked 8.8.8.8\n');
  assert.equal(connections, 0);
});

// Not without namespaces: as marft's own user, kill(-1) would reach every process of that user.
isolatedTest('killing the parent, the controller or every process: the controller survives', noNamespaces, async () => {
  const source = [
    'import os, signal',
    `for pid in (os.getppid(), ${process.pid}, 1, -1, 0):`,
    '    try:',
    '        os.kill(pid, signal.SIGKILL)',
    '    except OSError:',
    '        pass',
    'print("still here")',
  ].join('\n');
  const o = await hostile(source, 5000);
  // The program may kill itself with kill(-1) or kill(0); it must not reach anything outside.
  assert.ok(['ok', 'killed'].includes(o.status), o.status);
  assert.ok(process.kill(process.pid, 0));
  const again = await runPython({ source: 'print(1)', timeoutMs: 5000 });
  assert.equal(again.stdout, '1\n');
});

test('output flood on stdout and stderr: output_limit, quickly', async () => {
  const o = await hostile('import os\nwhile True:\n    os.write(1, b"A" * 65536)\n    os.write(2, b"B" * 65536)', 20_000);
  assert.equal(o.status, 'output_limit');
  assert.ok(o.wallMs < 10_000);
});

test('stdin hang: reading past the given input sees end-of-file; blocking forever times out', async () => {
  const eof = await hostile('import sys\ndata = sys.stdin.read()\nprint(len(data))\ninput()', 5000, { stdin: 'abc' });
  assert.equal(eof.status, 'runtime_error');
  assert.equal(eof.stdout, '3\n');
  assert.match(eof.stderr, /EOFError/);
  const block = await hostile('import os\nr, w = os.pipe()\nos.read(r, 1)', 800);
  assert.equal(block.status, 'timeout');
});

test('a large stdin the program never reads does not hang the controller', async () => {
  const o = await hostile('print("ignored")', 5000, { stdin: 'x'.repeat(8 * 2 ** 20) });
  assert.equal(o.status, 'ok');
  assert.equal(o.stdout, 'ignored\n');
});

isolatedTest('children that leave the process group with setsid() die with the run', noNamespaces, async () => {
  const daemon = [
    'import os, time',
    'if os.fork() == 0:',
    '    os.setsid()',
    '    if os.fork() == 0:',
    '        time.sleep(60)',
    '        os._exit(0)',
    '    os._exit(0)',
    'time.sleep(0.3)',
    'print("parent done")',
  ].join('\n');
  const normal = await hostile(daemon, 5000);
  assert.equal(normal.status, 'ok');
  assert.equal(normal.stdout, 'parent done\n');
  const timedOut = await hostile(daemon.replace('print("parent done")', 'while True: pass'), 1000);
  assert.equal(timedOut.status, 'timeout');
});

isolatedTest('many hostile runs at once: all contained, each with its own verdict', noNamespaces, async () => {
  const programs = ['while True: pass', 'print("fine")', 'import os\nwhile True:\n    try: os.fork()\n    except OSError: pass', 'x = bytearray(2**34)', 'print("y" * 10**8)'];
  const outcomes = await Promise.all(programs.map((source) => runPython({ source, timeoutMs: 1500, limits: { outputBytes: 2 ** 20 } })));
  assert.deepEqual(outcomes.map((o) => o.status), ['timeout', 'ok', 'timeout', 'memory', 'output_limit']);
  await assertNothingSurvives();
});

isolatedTest('a controller killed mid-run leaves nothing running: the in-namespace backstop ends the program', noNamespaces, async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', resolve('test/sandbox/fixtures/controller-dies.ts'), stagingRoot], { stdio: ['ignore', 'pipe', 'inherit'] });
  const firstLine = await new Promise<string>((r) => child.stdout.once('data', (d: Buffer) => r(d.toString())));
  const { first, end } = JSON.parse(firstLine) as { first: number; end: number };
  const deadline = performance.now() + 15_000;
  while ((await processesOwnedBy(first, end)).length === 0) {
    assert.ok(performance.now() < deadline, 'the sandboxed program never started');
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  // timeout 1 s + 5 s backstop margin: the sleeper must be gone within about 6 s of its start.
  const gone = performance.now() + 12_000;
  while ((await processesOwnedBy(first, end)).length > 0) {
    assert.ok(performance.now() < gone, 'the program outlived its controller');
    await new Promise((r) => setTimeout(r, 200));
  }
  // The dead controller could not remove its staging directory; the namespace's mounts are gone.
  rmSync(stagingRoot, { recursive: true, force: true });
  mkdirSync(stagingRoot);
});
