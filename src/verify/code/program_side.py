# The program's side of the code judge: the only process in which the judged program runs.
#
# It holds the program and nothing else: no tests, no expected values, no nonce, no result
# channel (see harness.py for how it is started). It executes the program, then serves the
# judge's requests, one JSON line each (wire.py), until the judge stops it:
#   ["run", source, module_name]  -> ["ready", [[name, value], ...]] | ["failed", status, excerpt]
#   ["op", op, target, args]      -> ["ok", value] | ["err", builtin_base, type_name, message, frames, status]
# where `op` is one of OPS below, applied to objects of this process on the judge's behalf.
# Values the judge may compare come back as data; other objects come back as handles
# (["h", id, kind]) that the judge can only use through further requests.
#
# Nothing here is trusted: the program can patch, replace or bypass any of it. That is harmless
# by design, because whatever this process sends, the judge receives only data and handles,
# and decides every verdict itself.
import builtins
import importlib
import os
import types

import wire

OWN_FILES = {os.path.abspath(__file__), os.path.abspath(wire.__file__)}
PROGRAM = ['']  # the program's source, for tracebacks


def _resolve_global(module_name, qualname):
    obj = importlib.import_module(module_name)
    for part in qualname.split('.'):
        obj = getattr(obj, part)
    return obj


def _call(target, args):
    positional, keywords = args
    return target(*positional, **keywords)


OPS = {
    'call': _call,
    'getattr': lambda target, args: getattr(target, args[0]),
    'setattr': lambda target, args: setattr(target, args[0], args[1]),
    'delattr': lambda target, args: delattr(target, args[0]),
    'iter': lambda target, args: iter(target),
    'next': lambda target, args: next(target),
    'len': lambda target, args: len(target),
    'bool': lambda target, args: bool(target),
    'str': lambda target, args: str(target),
    'repr': lambda target, args: repr(target),
    'getitem': lambda target, args: target[args[0]],
    'setitem': lambda target, args: target.__setitem__(args[0], args[1]),
    'delitem': lambda target, args: target.__delitem__(args[0]),
    'instancecheck': lambda target, args: isinstance(args[0], target),
    'subclasscheck': lambda target, args: issubclass(args[0], target),
}


def failure_status(exc):
    return 'memory' if isinstance(exc, MemoryError) else 'runtime_error'


def _program_frames(tb):
    """The traceback entries of the program (this file's and wire.py's frames left out)."""
    import linecache  # only when something failed: start-up time counts for every judged program
    import traceback

    # Registered so that tracebacks quote the program's lines.
    linecache.cache['solution.py'] = (len(PROGRAM[0]), None, PROGRAM[0].splitlines(True), 'solution.py')
    return [f for f in traceback.extract_tb(tb) if os.path.abspath(f.filename) not in OWN_FILES]


def excerpt(exc):
    import traceback

    frames = _program_frames(exc.__traceback__)
    head = 'Traceback (most recent call last):\n' + ''.join(traceback.format_list(frames)) if frames else ''
    return (head + ''.join(traceback.format_exception_only(type(exc), exc)))[-1500:]


def _builtin_base(cls):
    """The nearest built-in exception class of `cls`, so that the tests can catch it by that name."""
    for k in cls.__mro__:
        if getattr(builtins, k.__name__, None) is k:
            return k.__name__
    return 'Exception'


def serve(request_fd, reply_fd):
    objects = {}  # handle id -> object (kept alive, so that ids are never reused)
    handle_ids = {}  # id(object) -> handle id
    buffer = b''

    def handle_of(obj):
        key = id(obj)
        if key not in handle_ids:
            handle_ids[key] = len(objects) + 1
            objects[handle_ids[key]] = obj
        return handle_ids[key]

    def other_out(v):
        if isinstance(v, types.ModuleType):
            return ['m', getattr(v, '__name__', ''), handle_of(v)]
        kind = 'class' if isinstance(v, type) else 'function' if callable(v) else 'object'
        return ['h', handle_of(v), kind]

    def other_in(tag, x):
        if tag == 'h':
            return objects[x[1]]
        if tag == 'g':
            return _resolve_global(x[1], x[2])
        raise wire.ProtocolError('unknown tag %r' % tag)

    def send(message):
        data = wire.dump(message)
        while data:
            data = data[os.write(reply_fd, data):]

    def receive():
        nonlocal buffer
        while b'\n' not in buffer:
            chunk = os.read(request_fd, 1 << 20)
            if not chunk:
                os._exit(0)  # the judge is gone
            buffer += chunk
        line, _, buffer = buffer.partition(b'\n')
        return wire.load(line)

    def error_reply(exc):
        import traceback

        frames = _program_frames(exc.__traceback__)
        return ['err', _builtin_base(type(exc)), type(exc).__name__, str(exc)[:2000], ''.join(traceback.format_list(frames))[-1500:], failure_status(exc)]

    while True:
        message = receive()
        if message[0] == 'run':
            _, source, module_name = message
            namespace = {'__name__': module_name, '__builtins__': builtins}
            PROGRAM[0] = source
            try:
                exec(compile(source, 'solution.py', 'exec'), namespace)
            except BaseException as exc:  # SyntaxError, SystemExit from an early exit, anything
                send(['failed', failure_status(exc), excerpt(exc)])
                continue
            names = []
            for name, value in list(namespace.items()):
                if name.startswith('__') and name.endswith('__'):
                    continue
                try:
                    names.append([name, wire.encode(value, other_out)])
                except BaseException:
                    names.append([name, other_out(value)])
            send(['ready', names])
            continue
        _, op, target, args = message
        try:
            args = [wire.decode(a, other_in) for a in args]
            result = OPS[op](objects[target], args)
        except BaseException as exc:  # the program's exceptions, exits included, go back to the tests
            send(error_reply(exc))
            continue
        try:
            reply = ['ok', wire.encode(result, other_out)]
        except BaseException as exc:  # e.g. a value nested too deeply
            reply = ['err', 'TypeError', type(exc).__name__, 'the value cannot be sent to the tests: %s' % str(exc)[:300], '', 'runtime_error']
        send(reply)
