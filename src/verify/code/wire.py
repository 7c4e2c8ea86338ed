# How the judge (harness.py) and the program's process (program_side.py) exchange values.
#
# Messages are single lines of JSON. Values travel as data, never as code or pickles: scalars as
# JSON scalars, everything else as a JSON array whose first element is a tag, e.g. a tuple
# (1, [2]) is ["t", 1, ["l", 2]]. Only built-in data and a few standard classes (Counter,
# OrderedDict, deque, Fraction, Decimal) travel by value; the decoder builds them with the
# receiver's own classes, so a value that arrives in the judge compares honestly whatever the
# program did to its classes. Anything else travels as a reference that each side resolves
# with its own `other` function (a handle to an object of the program's process, or the name
# of a module-level object such as `int`).
#
# The judge treats everything the program's process sends as hostile: decode() accepts only the
# tags below, checks every payload, and raises ProtocolError for anything else.
import json
import sys

# Integers with more digits travel as hex text: Python 3.11+ refuses to convert such long
# decimal literals (sys.set_int_max_str_digits), and hex has no such limit.
BIG_INT = 10 ** 4000

# Replies larger than this are refused (the program's process could otherwise exhaust the
# judge's memory with one endless line).
MAX_MESSAGE_BYTES = 64 << 20


class ProtocolError(Exception):
    """A message that is not what the protocol allows."""


def dump(message):
    """One message as a line of ASCII JSON (NaN and infinities allowed, as Python's json does)."""
    return (json.dumps(message, ensure_ascii=True, separators=(',', ':')) + '\n').encode('ascii')


def load(line):
    try:
        return json.loads(line)
    except Exception as exc:  # ValueError, RecursionError, UnicodeDecodeError, MemoryError
        raise ProtocolError('unreadable message: %s' % str(exc)[:200]) from None


def _flat_pairs(items, enc):
    out = []
    for k, v in items:
        out.append(enc(k))
        out.append(enc(v))
    return out


def encode(value, other):
    """A value as JSON data; `other(value)` encodes what is not data (it may raise TypeError)."""
    # The standard classes, if imported at all: a value of a class that was never imported cannot
    # exist (and importing them here would cost every judged program their start-up time).
    collections, fractions, decimal = (sys.modules.get(name) for name in ('collections', 'fractions', 'decimal'))
    counter = getattr(collections, 'Counter', None)
    ordered = getattr(collections, 'OrderedDict', None)
    deque = getattr(collections, 'deque', None)
    fraction = getattr(fractions, 'Fraction', None)
    decimal_type = getattr(decimal, 'Decimal', None)

    def enc(v):
        t = type(v)
        if v is None or t is bool or t is str or t is float:
            return v
        if t is int:
            return v if -BIG_INT < v < BIG_INT else ['i', format(v, 'x')]
        if t is list:
            return ['l'] + [enc(x) for x in v]
        if t is tuple:
            return ['t'] + [enc(x) for x in v]
        if t is dict:
            return ['d'] + _flat_pairs(v.items(), enc)
        if t is set:
            return ['s'] + [enc(x) for x in v]
        if t is frozenset:
            return ['fs'] + [enc(x) for x in v]
        if t is bytes:
            return ['b', v.decode('latin-1')]
        if t is bytearray:
            return ['ba', bytes(v).decode('latin-1')]
        if t is complex:
            return ['c', v.real, v.imag]
        if t is counter:
            return ['Counter'] + _flat_pairs(dict.items(v), enc)
        if t is ordered:
            return ['od'] + _flat_pairs(dict.items(v), enc)
        if t is deque:
            return ['dq', v.maxlen] + [enc(x) for x in v]
        if t is fraction:
            return ['fr', enc(v.numerator), enc(v.denominator)]
        if t is decimal_type:
            return ['dec', str(v)]
        # Subclasses of built-in data travel as their built-in value, read through the base
        # type's own methods (an IntEnum member becomes its int, a namedtuple a tuple).
        if isinstance(v, int):
            return enc(int.__index__(v))
        if isinstance(v, float):
            return float.__float__(v)
        if isinstance(v, str):
            return str.__str__(v)
        if isinstance(v, dict):
            return ['d'] + _flat_pairs(dict.items(v), enc)
        if isinstance(v, list):
            return ['l'] + [enc(x) for x in list.__iter__(v)]
        if isinstance(v, tuple):
            return ['t'] + [enc(x) for x in tuple.__iter__(v)]
        if isinstance(v, frozenset):
            return ['fs'] + [enc(x) for x in frozenset.__iter__(v)]
        if isinstance(v, set):
            return ['s'] + [enc(x) for x in set.__iter__(v)]
        if isinstance(v, bytes):
            return ['b', bytes(v).decode('latin-1')]
        return other(v)

    return enc(value)


def _standard(module, name):
    """A standard class, imported when a value first needs it (the judge imports only from the
    installed library: its working directory is not on its path)."""
    return getattr(__import__(module), name)


def _text(x):
    if type(x) is not str:
        raise ProtocolError('expected text')
    return x


def _number(x):
    if type(x) not in (int, float):
        raise ProtocolError('expected a number')
    return x


def decode(data, other):
    """Builds the value that `data` encodes; `other(tag, data)` decodes the tags not listed here."""

    def dec(x):
        t = type(x)
        if x is None or t is bool or t is int or t is float or t is str:
            return x
        if t is not list or not x or type(x[0]) is not str:
            raise ProtocolError('not an encoded value')
        tag = x[0]
        if tag == 'l':
            return [dec(e) for e in x[1:]]
        if tag == 't':
            return tuple(dec(e) for e in x[1:])
        if tag == 's':
            return {dec(e) for e in x[1:]}
        if tag == 'fs':
            return frozenset(dec(e) for e in x[1:])
        if tag in ('d', 'Counter', 'od'):
            if len(x) % 2 != 1:
                raise ProtocolError('odd mapping')
            pairs = [(dec(x[i]), dec(x[i + 1])) for i in range(1, len(x), 2)]
            if tag == 'Counter':
                return _standard('collections', 'Counter')(dict(pairs))
            return _standard('collections', 'OrderedDict')(pairs) if tag == 'od' else dict(pairs)
        if tag == 'i' and len(x) == 2:
            return int(_text(x[1]), 16)
        if tag == 'b' and len(x) == 2:
            return _text(x[1]).encode('latin-1')
        if tag == 'ba' and len(x) == 2:
            return bytearray(_text(x[1]).encode('latin-1'))
        if tag == 'c' and len(x) == 3:
            return complex(_number(x[1]), _number(x[2]))
        if tag == 'dq' and len(x) >= 2:
            if x[1] is not None and type(x[1]) is not int:
                raise ProtocolError('bad deque length')
            return _standard('collections', 'deque')([dec(e) for e in x[2:]], x[1])
        if tag == 'fr' and len(x) == 3:
            num, den = dec(x[1]), dec(x[2])
            if type(num) is not int or type(den) is not int:
                raise ProtocolError('bad fraction')
            return _standard('fractions', 'Fraction')(num, den)
        if tag == 'dec' and len(x) == 2:
            return _standard('decimal', 'Decimal')(_text(x[1]))
        return other(tag, x)

    try:
        return dec(data)
    except ProtocolError:
        raise
    except Exception as exc:  # unhashable keys, bad literals, zero denominators, too deep
        raise ProtocolError('malformed value: %s: %s' % (type(exc).__name__, str(exc)[:200])) from None
