# Test harness for Python programs: runs inside the sandbox as main.py (never in marft's own process).
#
# The job arrives on fd 3 as one JSON line: {"nonce", "mode": "assert" | "call", "program",
# "setup"?, "tests"?: [<assertion script>], "fn"?, "cases"?: [<JSON text of an argument list>],
# "case_timeout_s"?}. It is read in
# full before the program runs, so the working directory holds nothing but this file: the program
# cannot read the tests or the nonce from disk, and fd 3 has nothing left to read.
#
# Results go back on fd 3 as lines "<nonce> <JSON record>". The parent ignores every line that
# does not start with the nonce, so a program that writes to fd 3 cannot forge a result without
# first digging the nonce out of this harness's memory. Passing needs positive evidence:
#   assert mode: per assertion script i, the literal line "<nonce>:passed:<i>", written (without
#                the json module, which the program could patch) only after script i ran to its end;
#   call mode:   {"case": i, "value": <JSON>} carries the serialised return value, which the
#                parent compares with the expected value (the program never sees expected values).
# After the last record the harness ends with os._exit, so atexit handlers, finally blocks of
# other threads and exit-status tricks of the program never run after the verdict, and a program
# that exits early (sys.exit(0), os._exit(0)) simply leaves no passing record. Everything the
# harness calls after the program ran was captured before it ran, and this module is removed from
# sys.modules, so the program cannot swap the guard below through `sys.modules['__main__']`.
import builtins
import collections
import fractions
import json
import linecache
import os
import signal
import sys
import traceback
import types

RESULT_FD = 3

# Class attributes through which an object can steer comparisons, truth tests, arithmetic,
# isinstance checks or container protocols. A returned object whose class (other than an
# immutable built-in type) defines one of them could fake test success, e.g. __eq__ -> True.
# (__str__, __repr__ and __hash__ are absent: they return real str / int values, which compare
# honestly.)
STEERING_ATTRIBUTES = frozenset(
    '__eq__ __ne__ __lt__ __le__ __gt__ __ge__ __bool__ __len__ __contains__ __iter__ '
    '__next__ __getitem__ __getattr__ __getattribute__ __class__ __instancecheck__ __subclasscheck__ '
    '__abs__ __neg__ __pos__ __invert__ __round__ __trunc__ __floor__ __ceil__ __float__ __int__ '
    '__index__ __complex__ __add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ '
    '__rtruediv__ __floordiv__ __rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __divmod__ '
    '__rdivmod__ __and__ __rand__ __or__ __ror__ __xor__ __rxor__ __lshift__ __rshift__ '
    '__matmul__ __reversed__'.split()
)
HEAP_TYPE_FLAG = 1 << 9  # Py_TPFLAGS_HEAPTYPE: static (built-in) types lack it and cannot be patched
IMMUTABLE_TYPE_FLAG = 1 << 8 if sys.version_info >= (3, 10) else 0  # Py_TPFLAGS_IMMUTABLETYPE (3.10+)

# Read the real attributes of a class even if a metaclass overrides attribute access.
_type_dict = type.__dict__['__dict__'].__get__
_type_mro = type.__dict__['__mro__'].__get__
_type_flags = type.__dict__['__flags__'].__get__


def _immutable(cls):
    flags = _type_flags(cls)
    return not flags & HEAP_TYPE_FLAG or bool(flags & IMMUTABLE_TYPE_FLAG)


def _snapshot_trusted():
    """Python-level standard classes that define comparisons: remember their methods before the program runs."""
    trusted = {}
    for cls in (collections.Counter, collections.UserDict, collections.UserList, collections.UserString, fractions.Fraction):
        for k in _type_mro(cls):
            if _immutable(k):
                continue
            d = _type_dict(k)
            trusted[k] = {name: d[name] for name in STEERING_ATTRIBUTES if name in d}
    return trusted


TRUSTED = _snapshot_trusted()


def honest_value_problem(value):
    """None when `value` compares honestly (plain data, or objects whose classes steer nothing); else why not."""
    seen = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        cls = type(v)
        for k in _type_mro(cls):
            if _immutable(k):
                continue
            d = _type_dict(k)
            if k in TRUSTED:
                if any(d.get(name) is not TRUSTED[k].get(name) for name in STEERING_ATTRIBUTES):
                    return 'returned a %s whose comparison methods were modified' % k.__name__
                continue
            steering = sorted(name for name in STEERING_ATTRIBUTES if name in d)
            if steering:
                return 'returned an instance of %s, which defines %s' % (getattr(k, '__name__', '?'), ', '.join(steering))
        # Elements are read through the built-in base type, never through methods of a subclass.
        if isinstance(v, dict):
            stack.extend(dict.keys(v))
            stack.extend(dict.values(v))
        elif isinstance(v, list):
            stack.extend(list.__iter__(v))
        elif isinstance(v, tuple):
            stack.extend(tuple.__iter__(v))
        elif isinstance(v, set):
            stack.extend(set.__iter__(v))
        elif isinstance(v, frozenset):
            stack.extend(frozenset.__iter__(v))
    return None


class DishonestReturn(Exception):
    """Raised when a function under test returns an object that could fake a comparison."""


def guarded(fn, check=honest_value_problem, error=DishonestReturn):
    """The function as the tests see it: its return values must compare honestly."""

    def call(*args, **kwargs):
        result = fn(*args, **kwargs)
        problem = check(result)
        if problem is not None:
            raise error('%s %s' % (getattr(fn, '__name__', 'function'), problem))
        return result

    call.__name__ = getattr(fn, '__name__', 'call')
    call.__qualname__ = getattr(fn, '__qualname__', 'call')
    call.__doc__ = getattr(fn, '__doc__', None)
    call.__wrapped__ = fn
    return call


def main(guard=guarded, function_type=types.FunctionType):
    write, exit_now, dumps, loads = os.write, os._exit, json.dumps, json.loads
    flush_stdout, flush_stderr = sys.stdout.flush, sys.stderr.flush
    sys.modules['__main__'] = types.ModuleType('__main__')
    raw = b''
    while not raw.endswith(b'\n'):
        chunk = os.read(RESULT_FD, 1 << 20)
        if not chunk:
            break
        raw += chunk
    job = json.loads(raw)
    del raw
    nonce = job.pop('nonce')

    def report(record):
        data = (nonce + ' ' + dumps(record) + '\n').encode('utf-8')
        while data:
            data = data[write(RESULT_FD, data):]

    def finish(code):
        try:
            flush_stdout()
            flush_stderr()
        except BaseException:
            pass
        exit_now(code)

    def excerpt(exc):
        # Drop the harness's own frame: the agents should see their program's lines only.
        tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
        text = ''.join(traceback.format_exception(type(exc), exc, tb))
        return text[-1500:]

    def compile_shown(source, filename):
        # Register the source so tracebacks quote the failing line.
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        return compile(source, filename, 'exec')

    pristine_builtins = dict(builtins.__dict__)
    program_globals = {'__name__': '__main__' if job.get('run_main') else 'solution', '__builtins__': builtins}
    try:
        exec(compile_shown(job['program'], 'solution.py'), program_globals)
    except BaseException as exc:  # SyntaxError, SystemExit from an early exit, anything
        report({'stage': 'program', 'status': failure_status(exc), 'error': excerpt(exc)})
        finish(1)

    if job['mode'] == 'assert':
        # The tests see the program's names, with its functions guarded and pristine built-ins.
        test_globals = dict(program_globals)
        for name, value in program_globals.items():
            if isinstance(value, function_type):
                test_globals[name] = guard(value)
        test_globals['__builtins__'] = pristine_builtins
        test_globals['__name__'] = '__main__'
        try:
            exec(compile_shown(job.get('setup') or '', 'setup.py'), test_globals)
        except BaseException as exc:
            report({'stage': 'setup', 'status': failure_status(exc), 'error': excerpt(exc)})
            finish(1)
        tests = job['tests']
        case_timeout = float(job.get('case_timeout_s') or 0) if len(tests) > 1 else 0
        for index, code in enumerate(tests):
            try:
                if case_timeout > 0:
                    signal.signal(signal.SIGALRM, _on_alarm)
                    signal.setitimer(signal.ITIMER_REAL, case_timeout)
                try:
                    exec(compile_shown(code, 'tests.py' if len(tests) == 1 else 'test_%d.py' % index), test_globals)
                finally:
                    if case_timeout > 0:
                        signal.setitimer(signal.ITIMER_REAL, 0)
            except CaseTimeout:
                report({'case': index, 'status': 'timeout', 'error': 'test took longer than %gs' % case_timeout})
                continue
            except AssertionError as exc:
                report({'case': index, 'status': 'wrong_answer', 'error': excerpt(exc)})
                continue
            except BaseException as exc:
                report({'case': index, 'status': failure_status(exc), 'error': excerpt(exc)})
                continue
            passed = (nonce + ':passed:' + str(index) + '\n').encode('ascii')
            while passed:
                passed = passed[write(RESULT_FD, passed):]
        finish(0)

    fn = resolve_function(program_globals, job['fn'])
    if fn is None:
        report({'stage': 'program', 'status': 'runtime_error', 'error': 'no function named %r in the program' % job['fn']})
        finish(1)
    case_timeout = float(job.get('case_timeout_s') or 0)
    for index, args_text in enumerate(job['cases']):
        args = loads(args_text)
        try:
            if case_timeout > 0:
                signal.signal(signal.SIGALRM, _on_alarm)
                signal.setitimer(signal.ITIMER_REAL, case_timeout)
            try:
                result = fn(*args)
            finally:
                if case_timeout > 0:
                    signal.setitimer(signal.ITIMER_REAL, 0)
        except CaseTimeout:
            report({'case': index, 'status': 'timeout', 'error': 'case took longer than %gs' % case_timeout})
            continue
        except MemoryError as exc:
            report({'case': index, 'status': 'memory', 'error': excerpt(exc)})
            continue
        except BaseException as exc:  # includes SystemExit: exiting is not an answer
            report({'case': index, 'status': 'runtime_error', 'error': excerpt(exc)})
            continue
        # The value travels as JSON text and the parent compares it: an object that claims to
        # equal everything has no JSON form, and a tuple becomes a list (as LiveCodeBench does).
        try:
            text = dumps(list(result) if isinstance(result, tuple) else result, allow_nan=False)
        except BaseException as exc:
            report({'case': index, 'status': 'wrong_answer', 'error': 'return value is not JSON data: %s' % str(exc)[:300]})
            continue
        report({'case': index, 'status': 'ok', 'value': text})
    report({'done': True})
    finish(0)


def failure_status(exc):
    return 'memory' if isinstance(exc, MemoryError) else 'runtime_error'


class CaseTimeout(BaseException):
    pass


def _on_alarm(signum, frame):
    raise CaseTimeout()


def resolve_function(namespace, name):
    """A top-level function, else a method of a `Solution` instance (the LeetCode/LiveCodeBench layout)."""
    fn = namespace.get(name)
    if callable(fn) and not isinstance(fn, type):
        return fn
    solution = namespace.get('Solution')
    if isinstance(solution, type) and hasattr(solution, name):
        return getattr(solution(), name)
    return None


main()
