"""Length-prefixed msgpack frames: a 4-byte big-endian body length, then the msgpack body.

Float arrays travel as msgpack bin holding raw little-endian float32 values, so they round-trip bit
for bit (NaN payloads, -0 and subnormals included); everything else is plain msgpack.
"""
import socket
import struct

import msgpack
import numpy as np
import torch

HEADER = struct.Struct(">I")
MAX_FRAME = 2**32 - 1


class ConnectionClosed(Exception):
    """The controller closed the socket (normal shutdown when it happens between frames)."""


def read_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ConnectionClosed(f"socket closed after {got} of {n} bytes")
        got += k
    return bytes(buf)


def read_frame(sock: socket.socket) -> bytes:
    (length,) = HEADER.unpack(read_exact(sock, HEADER.size))
    return read_exact(sock, length)


def write_frame(sock: socket.socket, body: bytes) -> None:
    if len(body) > MAX_FRAME:
        raise ValueError(f"message of {len(body)} bytes exceeds the 4 GiB frame limit")
    sock.sendall(HEADER.pack(len(body)) + body)


def unpack(body: bytes):
    return msgpack.unpackb(body, raw=False, strict_map_key=False)


def pack(obj) -> bytes:
    return msgpack.packb(obj, use_bin_type=True, default=_encode)


def _encode(obj):
    """Tensors and numpy arrays become float32 little-endian bytes (msgpack bin)."""
    if isinstance(obj, torch.Tensor):
        return f32_bytes(obj)
    if isinstance(obj, np.ndarray):
        return np.ascontiguousarray(obj, dtype="<f4").tobytes()
    raise TypeError(f"cannot encode {type(obj).__name__} in a message")


def f32_bytes(t: torch.Tensor) -> bytes:
    return t.detach().to("cpu", torch.float32).contiguous().numpy().astype("<f4", copy=False).tobytes()


def f32_tensor(b: bytes, shape=None, device="cpu") -> torch.Tensor:
    """A float32 tensor over a copy of `b` (little-endian float32 values), reshaped when `shape` is given."""
    if len(b) % 4 != 0:
        raise ValueError(f"a float32 array needs a multiple of 4 bytes, got {len(b)}")
    t = torch.from_numpy(np.frombuffer(b, dtype="<f4").copy())
    if shape is not None:
        t = t.reshape(list(shape))
    return t.to(device)
