// The sandbox's outcomes as values: ok, runtime errors with stderr, timeouts, memory, output
// limits, signals; stdin, extra files, fresh directories, and the concurrency limiter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { detectIsolation, runProgram, runPython, SlotLimiter, isolationMode, type LanguageRunner } from '../../src/sandbox/index.ts';

test('a program reads stdin and its stdout and stderr come back', async () => {
  const o = await runPython({ source: 'import sys\nname = input()\nprint("hello", name)\nprint("warn", file=sys.stderr)', stdin: 'ada\n', timeoutMs: 10_000 });
  assert.equal(o.status, 'ok');
  assert.equal(o.exitCode, 0);
  assert.equal(o.signal, null);
  assert.equal(o.stdout, 'hello ada\n');
  assert.equal(o.stderr, 'warn\n');
});

test('an exception is a runtime_error carrying the traceback tail; exit codes are kept', async () => {
  const o = await runPython({ source: 'def f():\n    return 1 / 0\nf()', timeoutMs: 10_000 });
  assert.equal(o.status, 'runtime_error');
  assert.equal(o.exitCode, 1);
  assert.match(o.stderr, /ZeroDivisionError: division by zero\n$/);
  const e = await runPython({ source: 'import sys\nsys.exit(7)', timeoutMs: 10_000 });
  assert.equal(e.status, 'runtime_error');
  assert.equal(e.exitCode, 7);
  const s = await runPython({ source: 'def broken(:\n  pass', timeoutMs: 10_000 });
  assert.equal(s.status, 'runtime_error');
  assert.match(s.stderr, /SyntaxError/);
});

test('the wall-clock timeout kills a busy loop and a sleeper', async () => {
  for (const source of ['while True:\n    pass', 'import time\ntime.sleep(60)']) {
    const o = await runPython({ source, timeoutMs: 700 });
    assert.equal(o.status, 'timeout', source);
    assert.ok(o.wallMs >= 700 && o.wallMs < 5000, `wall ${o.wallMs}`);
  }
});

test('the CPU-seconds limit ends a busy loop even with a long wall clock', async () => {
  const o = await runPython({ source: 'while True:\n    pass', timeoutMs: 20_000, limits: { cpuSeconds: 1 } });
  assert.equal(o.status, 'timeout');
  assert.ok(o.wallMs < 8000, `wall ${o.wallMs}`);
});

test('running out of address space is status memory', async () => {
  const o = await runPython({ source: 'blocks = []\nwhile True:\n    blocks.append(bytearray(50 * 2**20))', timeoutMs: 10_000, limits: { addressSpaceBytes: 256 * 2 ** 20 } });
  assert.equal(o.status, 'memory');
  assert.match(o.stderr, /MemoryError/);
});

test('a program that survives a MemoryError and exits 0 is ok', async () => {
  const source = 'import sys\ntry:\n    x = bytearray(2**40)\nexcept MemoryError:\n    print("MemoryError caught", file=sys.stderr)\nprint("fine")';
  const o = await runPython({ source, timeoutMs: 10_000 });
  assert.equal(o.status, 'ok');
  assert.equal(o.stdout, 'fine\n');
});

test('too much output is status output_limit and stdout is capped', async () => {
  const o = await runPython({ source: 'while True:\n    print("x" * 1000)', timeoutMs: 10_000, limits: { outputBytes: 100_000 } });
  assert.equal(o.status, 'output_limit');
  assert.ok(o.stdout.length <= 100_000);
  assert.ok(o.wallMs < 5000);
  const e = await runPython({ source: 'import sys\nwhile True:\n    sys.stderr.write("y" * 1000)', timeoutMs: 10_000, limits: { outputBytes: 100_000, stderrExcerptChars: 50 } });
  assert.equal(e.status, 'output_limit');
  assert.equal(e.stderr.length, 50);
});

test('a signal that ends the program is status killed with the signal name', async () => {
  const o = await runPython({ source: 'import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)', timeoutMs: 10_000 });
  assert.equal(o.status, 'killed');
  assert.equal(o.signal, 'SIGSEGV');
  assert.equal(o.exitCode, null);
});

test('extra files sit beside the program in a fresh, private working directory', async () => {
  const source = 'import os\nprint(open("data/in.txt").read().strip())\nopen("note.txt", "w").write("x")\nprint(sorted(os.listdir(".")))';
  const first = await runPython({ source, files: { 'data/in.txt': 'payload\n' }, timeoutMs: 10_000 });
  assert.equal(first.status, 'ok', first.stderr);
  assert.equal(first.stdout, "payload\n['data', 'main.py', 'note.txt']\n");
  const second = await runPython({ source: 'import os\nprint(sorted(os.listdir(".")))', timeoutMs: 10_000 });
  assert.equal(second.stdout, "['main.py']\n");
  await assert.rejects(runPython({ source: '', files: { '../evil': 'x' }, timeoutMs: 1000 }), /inside the directory/);
});

test('the limiter never runs more than its capacity at once', async () => {
  const limiter = new SlotLimiter(2);
  let peak = 0;
  const runs = Array.from({ length: 6 }, () =>
    limiter.run(async (slot) => {
      peak = Math.max(peak, limiter.inUse);
      assert.ok(slot === 0 || slot === 1);
      return runPython({ source: 'import time\ntime.sleep(0.2)\nprint("done")', timeoutMs: 10_000, limiter: new SlotLimiter(1) });
    }),
  );
  const outcomes = await Promise.all(runs);
  assert.equal(peak, 2);
  assert.ok(outcomes.every((o) => o.stdout === 'done\n'));
});

test('concurrent runs through one limiter overlap in time', async () => {
  const limiter = new SlotLimiter(4);
  const t0 = performance.now();
  const outcomes = await Promise.all(Array.from({ length: 4 }, () => runPython({ source: 'import time\ntime.sleep(1)', timeoutMs: 10_000, limiter })));
  const wall = performance.now() - t0;
  assert.ok(outcomes.every((o) => o.status === 'ok'));
  assert.ok(wall < 3500, `four 1 s sleeps took ${wall} ms with 4 slots`);
});

test('the isolation mode is reported, with the reason when namespaces are not used', () => {
  const iso = detectIsolation();
  assert.equal(isolationMode(), iso.mode);
  assert.equal(iso.reason === null, iso.mode === 'namespaces');
  if (iso.mode === 'rlimits') assert.ok(iso.reason!.length > 0);
});

test('runners are language-pluggable: a shell runner goes through the same sandbox', async () => {
  const shell: LanguageRunner = { language: 'sh', prepare: (source) => ({ files: { 'main.sh': source }, argv: ['/bin/sh', 'main.sh'] }) };
  const o = await runProgram(shell, { source: 'read x\necho "got $x"\nexit 3', stdin: 'hi\n', timeoutMs: 5000 });
  assert.equal(o.status, 'runtime_error');
  assert.equal(o.exitCode, 3);
  assert.equal(o.stdout, 'got hi\n');
  const loop = await runProgram(shell, { source: 'while :; do :; done', timeoutMs: 500 });
  assert.equal(loop.status, 'timeout');
});
