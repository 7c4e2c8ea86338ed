// The code judge cannot be forged from inside the judged program (issue 12). A pass is evidence
// written by the judge with a per-run nonce; the attacks below dig for that nonce (or for the
// tests) with everything a Python program can do in its own process and against the processes
// it can see, then write forged `<nonce>:passed:<i>` lines and call-mode records on every file
// descriptor (its own and any it can take from other processes) and exit. Against a judge that shares the program's process (the design before issue
// 12) the frame, heap, memory, signal, thread and fork attacks all found the nonce and passed a
// wrong program. Each must be judged failed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verifyCode, type CodeTests } from '../../src/verify/code/index.ts';
import { freshNonce, readHarnessChannel } from '../../src/verify/code/harness-channel.ts';

// A HumanEval-style check whose right answer is a sorted copy; the program below is wrong.
const CHECK = 'def check(candidate):\n    assert candidate([3, 1, 2]) == [1, 2, 3]\n    assert candidate([2, 1]) == [1, 2]\ncheck(solve)\n';
const assertTests: CodeTests = { kind: 'assert', code: CHECK };
const denseTests: CodeTests = { kind: 'asserts', tests: ['assert solve([3, 1, 2]) == [1, 2, 3]', 'assert solve([2, 1]) == [1, 2]'] };
const callTests: CodeTests = { kind: 'call', fn: 'solve', cases: [{ args: [[3, 1, 2]], expected: [1, 2, 3] }, { args: [[2, 1]], expected: [1, 2] }] };
const WRONG = 'def solve(xs):\n    return list(xs)\n';

// What every attack does with the nonces it found: forged passes for assertion scripts 0..3 and
// forged call records, on every file descriptor, then an exit before the tests can fail.
const FORGE = `
import os, re, sys
HEX = re.compile(r'[0-9a-f]{32}')
def stolen_fds():
    # The other processes' channels, taken with pidfd_getfd (syscalls 434 and 438 on every
    # architecture), so that a found nonce can be written where the judge writes.
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    stolen = []
    for pid in [int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]:
        pidfd = libc.syscall(434, pid, 0)
        for fd in range(3, 8) if pidfd >= 0 else ():
            stolen.append(libc.syscall(438, pidfd, fd, 0))
    return [fd for fd in stolen if fd >= 0]
def forge(candidates):
    stolen = stolen_fds()
    for nonce in list(dict.fromkeys(candidates))[:300]:
        lines = ''.join('%s:passed:%d\\n' % (nonce, i) for i in range(4))
        lines += ''.join('%s {"case": %d, "status": "ok", "value": "%s"}\\n' % (nonce, i, v) for i, v in enumerate(['[1, 2, 3]', '[1, 2]']))
        for fd in stolen + list(range(3, 256)):
            try:
                os.write(fd, lines.encode())
            except OSError:
                pass
    os._exit(0)
def in_frames(f):
    found = []
    while f is not None:
        for scope in (f.f_locals, f.f_globals):
            found += [v for v in list(scope.values()) if isinstance(v, str) and HEX.fullmatch(v)]
        f = f.f_back
    return found
def in_memory(read, pid='self'):
    found = []
    for line in open('/proc/%s/maps' % pid):
        span, perms = line.split()[:2]
        start, end = (int(x, 16) for x in span.split('-'))
        if not perms.startswith('rw') or end - start > 1 << 28:
            continue
        try:
            data = read(start, end - start)
        except Exception:
            continue
        found += [m.decode() for m in re.findall(rb'(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])', data)]
    return found
`;

const attacks: Record<string, string> = {
  'walking sys._getframe() from the top level': `${WRONG}${FORGE}forge(in_frames(sys._getframe()))\n`,
  "walking a caught exception's traceback frames": `${WRONG}${FORGE}try:\n    raise ValueError\nexcept ValueError as e:\n    forge(in_frames(e.__traceback__.tb_frame))\n`,
  'walking the frames from inside the function the tests call': `${FORGE}def solve(xs):\n    forge(in_frames(sys._getframe()))\n`,
  'a generator frame (gi_frame.f_back)': `${FORGE}def solve(xs):\n    def g():\n        yield me.gi_frame.f_back\n    me = g()\n    forge(in_frames(next(me)))\n`,
  'a coroutine frame (cr_frame.f_back)': `${FORGE}def solve(xs):\n    async def c():\n        return me.cr_frame.f_back\n    me = c()\n    try:\n        me.send(None)\n    except StopIteration as stop:\n        forge(in_frames(stop.value))\n`,
  'an async generator frame (ag_frame.f_back)': `${FORGE}def solve(xs):\n    async def ag():\n        yield me.ag_frame.f_back\n    me = ag()\n    try:\n        me.__anext__().send(None)\n    except StopIteration as stop:\n        forge(in_frames(stop.value))\n`,
  'scanning gc.get_objects() for the nonce': `${FORGE}import gc\ndef solve(xs):\n    found = []\n    for o in gc.get_objects():\n        try:\n            values = [o.cell_contents] if type(o).__name__ == 'cell' else list(o.values()) if isinstance(o, dict) else list(o) if isinstance(o, (list, tuple)) else []\n        except Exception:\n            continue\n        found += [v for v in values if isinstance(v, str) and HEX.fullmatch(v)]\n    forge(found)\n`,
  'following gc.get_referrers() from os.write to the closures that hold it': `${FORGE}import gc\ndef solve(xs):\n    found = []\n    for holder in gc.get_referrers(os.write):\n        for closure in gc.get_referrers(holder):\n            for fn in gc.get_referrers(closure):\n                for cell in getattr(fn, '__closure__', None) or ():\n                    try:\n                        v = cell.cell_contents\n                    except ValueError:\n                        continue\n                    if isinstance(v, str) and HEX.fullmatch(v):\n                        found.append(v)\n    forge(found)\n`,
  'reading its own memory with ctypes': `${FORGE}import ctypes\ndef solve(xs):\n    forge(in_memory(ctypes.string_at))\n`,
  'reading /proc/<pid>/mem of itself and of every process it can see': `${FORGE}def solve(xs):\n    found = []\n    for pid in ['self'] + [p for p in os.listdir('/proc') if p.isdigit()]:\n        try:\n            mem = open('/proc/%s/mem' % pid, 'rb', buffering=0)\n            found += in_memory(lambda start, size: (mem.seek(start), mem.read(size))[1], pid)\n        except OSError:\n            pass\n    forge(found)\n`,
  'process_vm_readv on every process it can see': `${FORGE}import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nclass IOVec(ctypes.Structure):\n    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]\ndef reader(pid):\n    def read(start, size):\n        buf = ctypes.create_string_buffer(size)\n        local, remote = IOVec(ctypes.addressof(buf), size), IOVec(start, size)\n        n = libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)\n        if n <= 0:\n            raise OSError(ctypes.get_errno(), 'process_vm_readv')\n        return buf.raw[:n]\n    return read\ndef solve(xs):\n    found = []\n    for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n        try:\n            found += in_memory(reader(int(pid)), pid)\n        except OSError:\n            pass\n    forge(found)\n`,
  'a signal handler that runs while the tests run': `${FORGE}import signal, time\nsignal.signal(signal.SIGALRM, lambda signum, frame: forge(in_frames(frame)))\nsignal.setitimer(signal.ITIMER_REAL, 0.3)\ndef solve(xs):\n    time.sleep(2)\n    return list(xs)\n`,
  'a thread that outlives the top level and reads the main thread\'s frames': `${FORGE}import threading, time\nmain_thread = threading.get_ident()\ndef spy():\n    time.sleep(0.3)\n    forge(in_frames(sys._current_frames()[main_thread]))\nthreading.Thread(target=spy, daemon=True).start()\ndef solve(xs):\n    time.sleep(2)\n    return list(xs)\n`,
  'a forked child that forges while the parent runs the tests': `${WRONG}${FORGE}import time\nif os.fork() == 0:\n    forge(in_frames(sys._getframe()))\ntime.sleep(0.5)\n`,
  'patching print, sys.stdout, os.write and the built-ins to turn failures into passes':
    `${FORGE}import builtins, io\nreal_write = os.write\ndef write(fd, data):\n    return real_write(fd, data.replace(b'wrong_answer', b'passed').replace(b'runtime_error', b'passed'))\nos.write = write\nbuiltins.print = lambda *a, **k: None\nsys.stdout = sys.stderr = io.StringIO()\nbuiltins.AssertionError = type('AssertionError', (Exception,), {})\ndef solve(xs):\n    return list(xs)\n`,
  'writing forged lines on every open fd and on its pipes to the judge': `${FORGE}def solve(xs):\n    fds = [int(fd) for fd in os.listdir('/proc/self/fd')]\n    for fd in fds:\n        for line in ['["ok", true]\\n', '["ok", ["l", 1, 2, 3]]\\n', '0' * 32 + ':passed:0\\n']:\n            try:\n                os.write(fd, line.encode())\n            except OSError:\n                pass\n    return list(xs)\n`,
  'signals to every process it can see (SIGINT, SIGALRM, SIGTERM, SIGUSR1) while the tests run': `${FORGE}import signal\ndef solve(xs):\n    for pid in [int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]:\n        for sig in (signal.SIGINT, signal.SIGALRM, signal.SIGTERM, signal.SIGUSR1):\n            try:\n                os.kill(pid, sig)\n            except OSError:\n                pass\n    return list(xs)\n`,
};

for (const [name, program] of Object.entries(attacks)) {
  test(`forgery does not pay: ${name}`, async () => {
    for (const tests of [assertTests, denseTests, callTests]) {
      // Time enough for the memory scans to finish: an attack that timed out would prove nothing.
      const v = await verifyCode({ program, tests, timeoutMs: 20_000 });
      assert.equal(v.passed, 0, `${tests.kind}: ${JSON.stringify(v.results)}`);
    }
  });
}

test('the attacks do not spoil an honest program: the same tooling around a right answer passes', async () => {
  // The probes run but find nothing, and the right answer still passes.
  const honest = `${FORGE}import gc\nfound = in_frames(sys._getframe()) + [o for o in gc.get_objects() if isinstance(o, str) and HEX.fullmatch(o)]\ndef solve(xs):\n    return sorted(xs)\n`;
  for (const tests of [assertTests, denseTests, callTests]) {
    const v = await verifyCode({ program: honest, tests, timeoutMs: 5000 });
    assert.equal(v.passed, v.total, `${tests.kind}: ${JSON.stringify(v.results)}`);
  }
});

test('the tests are not in the memory of the program: a scan of every readable page finds no line of them', async () => {
  const marker = `SECRET_MARKER_${process.pid}_${Date.now()}`;
  // Through /proc/self/mem, which answers EIO where a page cannot be read (no SIGBUS).
  const scan = [
    'import re',
    'def solve(xs):',
    '    hits = []',
    '    mem = open("/proc/self/mem", "rb", buffering=0)',
    '    for line in open("/proc/self/maps"):',
    '        span, perms = line.split()[:2]',
    '        start, end = (int(x, 16) for x in span.split("-"))',
    '        if perms.startswith("r") and end - start < 1 << 28:',
    '            try:',
    '                mem.seek(start)',
    '                data = mem.read(end - start)',
    '            except (OSError, OverflowError, ValueError):',
    '                continue',
    // A pattern, not the marker: the program must not create the text it looks for.
    '            if re.search(rb"SECRET_MARKER_[0-9]+_[0-9]+", data):',
    '                hits.append(span)',
    '    return hits',
  ].join('\n');
  const v = await verifyCode({ program: scan, tests: { kind: 'assert', code: `# ${marker}\nassert solve([]) == []` }, timeoutMs: 10_000 });
  assert.deepEqual(v.results, [{ status: 'passed' }]);
});

test("the program's process cannot reach the judge: no ptrace, /proc/<pid>/mem, fd, environ or pidfd_getfd", async () => {
  // Returns what it could get from other processes; the judge's are the ones that matter.
  const probe = [
    'import ctypes, os',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'def reach():',
    '    got = []',
    '    for pid in [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]:',
    '        for what in ("mem", "environ", "maps", "fd/3"):',
    '            try:',
    '                with open("/proc/%d/%s" % (pid, what), "rb", buffering=0) as f:',
    '                    f.read(1)',
    '                got.append((pid, what))',
    '            except OSError:',
    '                pass',
    '        if libc.ptrace(16, pid, 0, 0) == 0:  # PTRACE_ATTACH',
    '            got.append((pid, "ptrace"))',
    '        pidfd = libc.syscall(434, pid, 0)  # pidfd_open',
    '        if pidfd >= 0 and libc.syscall(438, pidfd, 3, 0) >= 0:  # pidfd_getfd: steal fd 3',
    '            got.append((pid, "pidfd_getfd"))',
    '    return got',
  ].join('\n');
  const v = await verifyCode({ program: probe, tests: { kind: 'assert', code: 'assert reach() == []' }, timeoutMs: 10_000 });
  assert.deepEqual(v.results, [{ status: 'passed' }]);
});

test('the controller accepts only lines that carry the run\'s nonce', () => {
  const nonce = freshNonce();
  const guessed = ['0'.repeat(32), freshNonce(), nonce.slice(0, 31) + (nonce[31] === '0' ? '1' : '0'), nonce.toUpperCase(), nonce.slice(0, 16)];
  const forged = guessed.flatMap((g) => [`${g}:passed:0`, `${g} {"case": 0, "status": "ok", "value": "[1, 2, 3]"}`, `${g} {"stage": "program", "status": "passed"}`]);
  const prefixed = [` ${nonce}:passed:0`, `x${nonce} {"case": 1, "status": "ok", "value": "1"}`, `${nonce}:passed:1 `, `${nonce}:passed:-1`, `${nonce} [1]`, `${nonce} {"case": 2`];
  const none = readHarnessChannel([...forged, ...prefixed, ''].join('\n'), nonce);
  assert.deepEqual(none, { records: [], passedScripts: new Set() });
  // The same channel with the judge's real lines among the forged ones: only those count.
  const real = readHarnessChannel([...forged, `${nonce}:passed:2`, `${nonce} {"case": 3, "status": "wrong_answer"}`, ...prefixed].join('\n'), nonce);
  assert.deepEqual(real, { records: [{ case: 3, status: 'wrong_answer' }], passedScripts: new Set([2]) });
  assert.throws(() => readHarnessChannel('', 'not a nonce'), RangeError);
});
