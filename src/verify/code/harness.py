# The code judge for assertion scripts and call-based tests: runs inside the sandbox as main.py
# (never in marft's own process), in two processes that share no memory.
#
# This process, the judge, receives the job on fd 3 as one JSON line: {"nonce", "mode": "assert" |
# "call", "program", "setup"?, "tests"?: [<assertion script>], "fn"?, "cases"?: [<JSON text of an
# argument list>], "case_timeout_s"?}. It runs the assertion scripts itself and reports on fd 3
# with lines "<nonce> <JSON record>" and, per assertion script i that ran to its end,
# "<nonce>:passed:<i>"; the parent ignores every line that does not carry the nonce.
#
# The program never runs here. Before the job is read, the judge forks the program's process
# (program_side.py), which closes fd 3 and then only ever receives the program's source and
# requests to call its functions or read its objects. The tests, the expected values, the nonce
# and the result channel exist only in the judge, so nothing the program does in its own
# process (walking frames, scanning the heap or raw memory, patching anything, forking, threads,
# signal handlers) can reach them. Values come back as data (wire.py) that the judge rebuilds
# with its own classes, so every comparison in the tests is computed here, honestly; objects
# that are not data come back as handles (class Handle below), which have no comparison or
# arithmetic of their own. Across the process boundary the judge is protected by:
#   - PR_SET_DUMPABLE=0, set before the job is read: a process of the same uid can neither
#     ptrace the judge nor open its /proc/<pid>/mem, fd/, environ or maps (the kernel's ptrace
#     access check refuses non-dumpable processes to anyone without CAP_SYS_PTRACE);
#   - fd 3 is close-on-exec and closed in the forked program process; no other path leads to it;
#   - nothing is imported from the working directory (which the program can write) once the
#     program may run;
#   - SIGINT is ignored, and the alarm of a timed test marks the test failed however the test
#     code handles the exception, so a signal from the program can only make a test fail;
#   - a program process that dies takes the judge down the same way (same exit status or
#     signal), so an exit is never a pass; one that breaks the protocol fails the test.
# After a timed-out test or a protocol failure the program's process is replaced by a fresh
# interpreter (not a fork: this process now holds secrets) and the setup runs again.
import builtins
import importlib
import json
import os
import select
import signal
import sys

import wire

RESULT_FD = 3


def fork_program_process():
    """The first program process: forked before this process holds anything secret, once the
    modules that both sides use are imported (so neither imports them again)."""
    request_r, request_w = os.pipe()
    reply_r, reply_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            for fd in (RESULT_FD, request_w, reply_r):
                try:
                    os.close(fd)
                except OSError:
                    pass
            import program_side

            program_side.serve(request_r, reply_w)
        finally:
            os._exit(1)
    os.close(request_r)
    os.close(reply_w)
    return pid, request_w, reply_r


FIRST_PROGRAM_PROCESS = fork_program_process()

try:
    import ctypes
except ImportError:  # a Python built without ctypes: the judge refuses to run (see protect_judge)
    ctypes = None

HERE = os.path.dirname(os.path.abspath(__file__))
OWN_FILES = {os.path.abspath(f) for f in (__file__, wire.__file__, os.path.join(HERE, 'program_side.py'))}
# Modules a program may import that the judge must not import in its place.
NOT_MIRRORED = {'__main__', 'wire', 'program_side', 'antigravity', 'this'}
PR_SET_DUMPABLE, PR_GET_DUMPABLE = 4, 3
HANDLE_KINDS = {'class', 'function', 'object'}

# The working directory belongs to the program (it can create files there): from here on the
# judge imports only from the installed library.
sys.path[:] = [p for p in sys.path if p not in ('', HERE, os.path.realpath(HERE))]


class CaseTimeout(BaseException):
    """A timed test ran out of time."""


class ProgramBroken(BaseException):
    """The program's process answered something that is not the protocol."""


class ProgramExit(BaseException):
    """The program raised SystemExit, KeyboardInterrupt or GeneratorExit: not an answer."""


class ProgramError(Exception):
    """An exception of the program that has no built-in class to stand for it."""


def end_like(status):
    """Ends the judge the way the program's process ended (exit status or signal)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


class ProgramProcess:
    """The judge's end of one program process: requests, replies, handles, and its ending."""

    def __init__(self, pid, request_fd, reply_fd):
        self.pid, self.request_fd, self.reply_fd = pid, request_fd, reply_fd
        self.buffer = b''
        self.handles = {}
        self.failure = None  # the exception class that failed the current test, once one did
        self.stopped = False
        try:
            self.pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            self.pidfd = None  # Linux < 5.3: poll for the exit instead
        os.set_blocking(request_fd, False)

    # -- lifecycle

    def stop(self):
        """Kills the process (if still there) and reaps it."""
        if self.stopped:
            return
        self.stopped = True
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except OSError:
            pass
        for fd in (self.request_fd, self.reply_fd, self.pidfd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass

    def fail(self, cls, message=''):
        """The current test fails with `cls`: however the test code catches it, it stays failed."""
        if self.failure is None:
            self.failure = cls
            self.failure_message = message
            self.stop()
        raise cls(message)

    def _ended(self):
        """The process is gone (or closed its end): end the judge the same way."""
        for _ in range(20):  # it may still be on its way out: up to a second
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid != 0:
                end_like(status)
            if self.pidfd is not None:
                select.select([self.pidfd], [], [], 1.0)
            else:
                select.select([], [], [], 0.05)
        self.stop()  # alive but no longer answering: a failed exit
        end_like(1 << 8)

    def _wait(self, readable=None, writable=None):
        while True:
            watch = [readable] if readable is not None else []
            if self.pidfd is not None:
                watch.append(self.pidfd)
            r, w, _ = select.select(watch, [writable] if writable is not None else [], [], None if self.pidfd is not None else 0.05)
            if (readable is not None and readable in r) or (writable is not None and writable in w):
                return
            if self.pidfd is not None and self.pidfd in r:
                self._ended()
            if self.pidfd is None:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid != 0:
                    end_like(status)

    # -- messages

    def send(self, message):
        data = wire.dump(message)
        while data:
            self._wait(writable=self.request_fd)
            try:
                data = data[os.write(self.request_fd, data):]
            except BlockingIOError:
                continue
            except OSError:  # EPIPE: the process closed its end or is gone
                self._ended()

    def receive(self):
        while True:
            i = self.buffer.find(b'\n')
            if i >= 0:
                line, self.buffer = self.buffer[:i], self.buffer[i + 1:]
                try:
                    return wire.load(line)
                except wire.ProtocolError as exc:
                    self.fail(ProgramBroken, str(exc))
            if len(self.buffer) > wire.MAX_MESSAGE_BYTES:
                self.fail(ProgramBroken, 'a reply of more than %d bytes' % wire.MAX_MESSAGE_BYTES)
            self._wait(readable=self.reply_fd)
            chunk = os.read(self.reply_fd, 1 << 20)
            if not chunk:
                self._ended()
            self.buffer += chunk

    def request(self, message):
        if self.failure is not None:
            raise self.failure(self.failure_message)
        self.send(message)
        return self.receive()

    def run(self, source, module_name):
        """Runs the program: (names, None) with its top-level names, or (None, (status, excerpt))."""
        reply = self.request(['run', source, module_name])
        if isinstance(reply, list) and len(reply) == 3 and reply[0] == 'failed' and reply[1] in ('memory', 'runtime_error') and isinstance(reply[2], str):
            return None, (reply[1], reply[2])
        if not (isinstance(reply, list) and len(reply) == 2 and reply[0] == 'ready' and isinstance(reply[1], list)):
            self.fail(ProgramBroken, 'unexpected reply to run')
        names = {}
        for entry in reply[1]:
            if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
                self.fail(ProgramBroken, 'unexpected name entry')
            name, data = entry
            names[name] = self.module(name, data) or self.decode(data)
        return names, None

    def module(self, name, data):
        """The judge's own copy of a standard module the program imported under its own name."""
        if not (isinstance(data, list) and len(data) == 3 and data[0] == 'm' and data[1] == name):
            return None
        known = getattr(sys, 'stdlib_module_names', ())
        if name in NOT_MIRRORED or name not in known:
            return None
        try:
            return importlib.import_module(name)
        except Exception:
            return None

    def op(self, name, handle, *args):
        reply = self.request(['op', name, handle._id, [self.encode(a) for a in args]])
        if isinstance(reply, list) and len(reply) == 2 and reply[0] == 'ok':
            return self.decode(reply[1])
        if isinstance(reply, list) and len(reply) == 6 and reply[0] == 'err' and all(isinstance(x, str) for x in reply[1:]):
            base = reply[1]
            # Only `next` may end an iteration. A call that raises StopIteration would otherwise
            # silently shorten a `map` in the tests (`all(map(candidate, cases))` would hold):
            # it becomes a RuntimeError, as PEP 479 does for generators.
            if name != 'next' and base in ('StopIteration', 'StopAsyncIteration'):
                base = 'RuntimeError'
            raise program_exception(base, *reply[2:])
        self.fail(ProgramBroken, 'unexpected reply to %s' % name)

    # -- values

    def encode(self, value):
        return wire.encode(value, self._reference)

    def _reference(self, v):
        if type(v) is Handle:
            if v._process is not self:
                raise TypeError('an object of an earlier run of the program cannot be used any more')
            return ['h', v._id]
        module, qualname = getattr(v, '__module__', None), getattr(v, '__qualname__', None)
        if isinstance(module, str) and isinstance(qualname, str) and '<' not in qualname:
            try:
                found = importlib.import_module(module)
                for part in qualname.split('.'):
                    found = getattr(found, part)
            except Exception:
                found = None
            if found is v:
                return ['g', module, qualname]
        raise TypeError('cannot pass a %s to the program (only data, its own objects and module-level names)' % type(v).__name__)

    def decode(self, data):
        try:
            return wire.decode(data, self._handle)
        except wire.ProtocolError as exc:
            self.fail(ProgramBroken, str(exc))

    def _handle(self, tag, x):
        if tag == 'h' and len(x) == 3 and type(x[1]) is int and x[2] in HANDLE_KINDS:
            hid, kind = x[1], x[2]
        elif tag == 'm' and len(x) == 3 and isinstance(x[1], str) and type(x[2]) is int:
            hid, kind = x[2], 'object'
        else:
            raise wire.ProtocolError('unknown tag %r' % tag)
        if hid not in self.handles:
            self.handles[hid] = Handle(self, hid, kind)
        return self.handles[hid]


def program_exception(base, type_name, message, frames, status):
    """The exception the tests see for one the program raised: its nearest built-in class."""
    cls = getattr(builtins, base, None)
    exc = None
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            exc = cls(message)
        except Exception:
            exc = None
    elif isinstance(cls, type) and issubclass(cls, BaseException):
        exc = ProgramExit(message)
    if exc is None:
        exc = ProgramError(message)
    exc.program_frames = frames
    exc.program_line = '%s: %s\n' % (type_name, message) if message else '%s\n' % type_name
    return exc


class Handle:
    """An object that lives in the program's process. It has identity (equal only to itself),
    attributes, calls, iteration, length, truth, items and text, all answered by the program's
    process; it has no comparison or arithmetic, so the tests never let the program decide
    whether an answer is right."""

    __slots__ = ('_process', '_id', '_kind')

    def __init__(self, process, hid, kind):
        object.__setattr__(self, '_process', process)
        object.__setattr__(self, '_id', hid)
        object.__setattr__(self, '_kind', kind)

    def _op(self, name, *args):
        return self._process.op(name, self, *args)

    def __call__(self, *args, **kwargs):
        return self._op('call', list(args), kwargs)

    def __getattr__(self, name):
        if name in Handle.__slots__:
            raise AttributeError(name)
        return self._op('getattr', name)

    def __setattr__(self, name, value):
        self._op('setattr', name, value)

    def __delattr__(self, name):
        self._op('delattr', name)

    def __iter__(self):
        return _remote_items(self._op('iter'))

    def __next__(self):
        return self._op('next')

    def __len__(self):
        return self._op('len')

    def __bool__(self):
        return self._op('bool')

    def __getitem__(self, key):
        return self._op('getitem', key)

    def __setitem__(self, key, value):
        self._op('setitem', key, value)

    def __delitem__(self, key):
        self._op('delitem', key)

    def __str__(self):
        return self._op('str')

    def __repr__(self):
        return self._op('repr')

    def __instancecheck__(self, obj):
        return self._op('instancecheck', obj)

    def __subclasscheck__(self, cls):
        return self._op('subclasscheck', cls)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def _remote_items(iterator):
    while True:
        try:
            item = iterator._op('next') if type(iterator) is Handle else next(iterator)
        except StopIteration:
            return
        yield item


def spawn_program_process():
    """A later program process: a fresh interpreter (a fork would copy the judge's secrets)."""
    request_r, request_w = os.pipe()
    reply_r, reply_w = os.pipe()
    code = 'import sys; sys.path.insert(0, %r); import program_side; program_side.serve(3, 4)' % HERE
    pid = os.posix_spawn(
        sys.executable,
        [sys.executable, '-E', '-s', '-B', '-c', code],
        dict(os.environ),
        # Onto fds 3 and 4 (fd 3 thereby stops being the result channel, which is close-on-exec).
        file_actions=[(os.POSIX_SPAWN_DUP2, request_r, 3), (os.POSIX_SPAWN_DUP2, reply_w, 4)],
        setsigdef=(signal.SIGINT, signal.SIGALRM),
    )
    os.close(request_r)
    os.close(reply_w)
    return ProgramProcess(pid, request_w, reply_r)


def protect_judge():
    """None when the judge's memory and channel are out of the program's reach; else why not."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    os.set_inheritable(RESULT_FD, False)
    if not sys.platform.startswith('linux'):
        return None  # elsewhere no /proc, and reading another process's memory needs privileges
    if ctypes is None:
        return 'this Python has no ctypes, so the judge cannot make itself non-dumpable'
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 or libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0:
            return 'prctl(PR_SET_DUMPABLE, 0) failed (errno %d)' % ctypes.get_errno()
    except Exception as exc:
        return 'prctl(PR_SET_DUMPABLE, 0) failed: %s' % exc
    return None


def failure_status(exc):
    return 'memory' if isinstance(exc, MemoryError) else 'runtime_error'


def excerpt(exc):
    """The traceback of a failed test: the test's frames, then the program's (the judge's own left out)."""
    import linecache  # only when a test failed (from the installed library: see sys.path above)
    import traceback

    for filename, source in SHOWN.items():
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if os.path.abspath(f.filename) not in OWN_FILES]
    text = 'Traceback (most recent call last):\n' + ''.join(traceback.format_list(frames)) + getattr(exc, 'program_frames', '')
    line = getattr(exc, 'program_line', None)
    text += line if line is not None else ''.join(traceback.format_exception_only(type(exc), exc))
    return text[-1500:]


SHOWN = {}  # file name -> source of the tests, so that tracebacks quote the failing line


def compile_shown(source, filename):
    SHOWN[filename] = source
    return compile(source, filename, 'exec')


def main():
    process = ProgramProcess(*FIRST_PROGRAM_PROCESS)
    protection_problem = protect_judge()
    raw = b''
    while not raw.endswith(b'\n'):
        chunk = os.read(RESULT_FD, 1 << 20)
        if not chunk:
            break
        raw += chunk
    job = json.loads(raw)
    del raw
    nonce = job.pop('nonce')

    def write_all(data):
        while data:
            data = data[os.write(RESULT_FD, data):]

    def report(record):
        write_all((nonce + ' ' + json.dumps(record) + '\n').encode('utf-8'))

    def finish(code):
        if process is not None:
            process.stop()
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        os._exit(code)

    if protection_problem is not None:
        report({'stage': 'harness', 'status': 'runtime_error', 'error': 'marft judge: ' + protection_problem})
        finish(1)

    module_name = '__main__' if job.get('run_main') else 'solution'
    program = job['program']

    def start():
        """Runs the program in `process`; its top-level names, or reports why not and ends."""
        try:
            names, failed = process.run(program, module_name)
        except (ProgramBroken, CaseTimeout) as exc:
            names, failed = None, ('runtime_error', 'the program broke the protocol with the tests: %s' % exc)
        if failed is not None:
            report({'stage': 'program', 'status': failed[0], 'error': failed[1]})
            finish(1)
        return names

    def on_alarm(signum, frame):
        process.fail(CaseTimeout)

    def timed(seconds):
        if seconds > 0:
            signal.signal(signal.SIGALRM, on_alarm)
            signal.setitimer(signal.ITIMER_REAL, seconds)

    def untimed():
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_IGN)

    def failed_record(index, exc, limit):
        """The record of a test that raised `exc`, or whose program process failed it."""
        if process.failure is CaseTimeout:
            return {'case': index, 'status': 'timeout', 'error': 'test took longer than %gs' % limit}
        if process.failure is ProgramBroken:
            return {'case': index, 'status': 'runtime_error', 'error': 'the program broke the protocol with the tests: %s' % process.failure_message}
        if isinstance(exc, AssertionError):
            return {'case': index, 'status': 'wrong_answer', 'error': excerpt(exc)}
        return {'case': index, 'status': failure_status(exc), 'error': excerpt(exc)}

    if job['mode'] == 'assert':
        tests = job['tests']
        case_timeout = float(job.get('case_timeout_s') or 0) if len(tests) > 1 else 0

        def prepare():
            """The tests' namespace: the program's names, then the setup run in it."""
            test_globals = dict(start())
            test_globals['__builtins__'] = dict(builtins.__dict__)
            test_globals['__name__'] = '__main__'
            try:
                exec(compile_shown(job.get('setup') or '', 'setup.py'), test_globals)
            except BaseException as exc:
                report({'stage': 'setup', 'status': failure_status(exc), 'error': excerpt(exc)})
                finish(1)
            return test_globals

        test_globals = prepare()
        for index, code in enumerate(tests):
            if process.failure is not None:
                process = spawn_program_process()
                test_globals = prepare()
            error = None
            try:
                timed(case_timeout)
                try:
                    exec(compile_shown(code, 'tests.py' if len(tests) == 1 else 'test_%d.py' % index), test_globals)
                finally:
                    untimed()
            except BaseException as exc:
                error = exc
            if process.failure is not None or error is not None:
                report(failed_record(index, error, case_timeout))
                continue
            write_all((nonce + ':passed:' + str(index) + '\n').encode('ascii'))
        finish(0)

    def resolve_function(names, name):
        """A top-level function, else a method of a `Solution` instance (the LeetCode/LiveCodeBench layout)."""
        fn = names.get(name)
        if type(fn) is Handle and fn._kind == 'function':
            return fn
        solution = names.get('Solution')
        if type(solution) is Handle and solution._kind == 'class':
            try:
                return getattr(solution(), name)
            except BaseException:  # whatever the program raised or did: no function to call
                return None
        return None

    def function():
        fn = resolve_function(start(), job['fn'])
        if fn is None:
            report({'stage': 'program', 'status': 'runtime_error', 'error': 'no function named %r in the program' % job['fn']})
            finish(1)
        return fn

    case_timeout = float(job.get('case_timeout_s') or 0)
    fn = function()
    for index, args_text in enumerate(job['cases']):
        if process.failure is not None:
            process = spawn_program_process()
            fn = function()
        args = json.loads(args_text)
        try:
            timed(case_timeout)
            try:
                result = fn(*args)
            finally:
                untimed()
        except BaseException as exc:  # includes the program's exits: exiting is not an answer
            record = failed_record(index, exc, case_timeout)
            if record['status'] == 'wrong_answer':
                record['status'] = 'runtime_error'
            report(record)
            continue
        if process.failure is not None:
            report(failed_record(index, None, case_timeout))
            continue
        # The value travels as JSON text and the parent compares it: an object of the program
        # has no JSON form, and a tuple becomes a list (as LiveCodeBench does).
        try:
            text = json.dumps(list(result) if isinstance(result, tuple) else result, allow_nan=False)
        except BaseException as exc:
            report({'case': index, 'status': 'wrong_answer', 'error': 'return value is not JSON data: %s' % str(exc)[:300]})
            continue
        report({'case': index, 'status': 'ok', 'value': text})
    report({'done': True})
    finish(0)


main()
