"""The worker's command loop. Rank 0 connects to the controller's Unix socket, reads one framed
command at a time and broadcasts it; every rank executes it; rank 0 writes the reply
{"id", "ok": true, "result"} or {"id", "ok": false, "error": "<one line>"}. The first reply (id 0)
answers the start itself: the model loaded, or why not.

Errors: a caller mistake or a failure raised on every rank alike comes back as an error reply and the
worker goes on. A failure on only some ranks leaves the group out of step, so rank 0 reports it
and every rank exits; the TypeScript side then sees the process end (src/engine/torch/worker-process.ts).
"""
import os
import socket
import sys
import time
import traceback

from .engine import EngineError, TorchEngine
from .framing import ConnectionClosed, f32_bytes, f32_tensor, pack, read_frame, unpack, write_frame
from .parallel import Group
from .sampler import SampleError


def echo(value):
    """Returns `value` with every float array taken through a torch tensor and back (the framing test)."""
    if isinstance(value, bytes):
        return f32_bytes(f32_tensor(value))
    if isinstance(value, list):
        return [echo(v) for v in value]
    if isinstance(value, dict):
        return {k: echo(v) for k, v in value.items()}
    return value


def dispatch(engine: TorchEngine, cmd: str, a: dict):
    if cmd == "info":
        return engine.info()
    if cmd == "echo":
        return {"value": echo(a["value"])}
    if cmd == "putAdapter":
        return engine.put_adapter(a["name"], a["adapter"])
    if cmd == "getAdapter":
        return engine.get_adapter(a["name"])
    if cmd == "deleteAdapter":
        return engine.delete_adapter(a["name"])
    if cmd == "putCritic":
        return engine.put_critic(a["name"], a["spec"], a["head"], a.get("adapter"))
    if cmd == "getCritic":
        return engine.get_critic(a["name"])
    if cmd == "setBaseTrainable":
        return engine.set_base_trainable(a["trainable"])
    if cmd == "saveBase":
        return engine.save_base(a["dir"])
    if cmd == "forward":
        return engine.forward(a["target"], a["batch"], a.get("temperature"), bool(a.get("retainGraph")))
    if cmd == "backward":
        return engine.backward(a["handle"], a.get("dLogprobs"), a.get("dValues"))
    if cmd == "releaseGraph":
        return engine.release_graph(a["handle"])
    if cmd == "optimStep":
        return engine.optim_step(a["trainable"], a["params"])
    if cmd == "zeroGrad":
        return engine.zero_grad(a["trainable"])
    if cmd == "paramSizes":
        return engine.param_sizes(a["trainable"])
    if cmd == "getOptimState":
        return engine.get_optim_state(a["trainable"])
    if cmd == "putOptimState":
        return engine.put_optim_state(a["trainable"], a["step"], a["m"], a["v"])
    if cmd == "sample":
        return engine.sample(a["target"], a["prompts"], a["params"])
    if cmd == "exit":
        # For the tests of a dying worker: the process ends with this code without answering.
        os._exit(int(a.get("code", 1)))
    raise EngineError(f"unknown command {cmd!r}")


def describe(e: BaseException) -> str:
    if isinstance(e, (EngineError, SampleError)):
        return str(e)
    text = f"{type(e).__name__}: {e}"
    return " ".join(text.split())


def serve(socket_path: str, model_dir: str, dtype: str, device: str, logits_chunk_rows: int = 0) -> int:
    group = Group(device)
    conn = None
    if group.rank == 0:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(socket_path)
    engine, error = None, None
    try:
        engine = TorchEngine(group, model_dir, dtype, logits_chunk_rows)
    except Exception as e:  # noqa: BLE001 — reported to the controller as the start's answer
        error = f"cannot load {model_dir}: {describe(e)}"
    errors = [e for e in group.all_gather(error) if e]
    if group.rank == 0:
        reply = {"id": 0, "ok": False, "error": errors[0]} if errors else {"id": 0, "ok": True, "result": engine.info()}
        write_frame(conn, pack(reply))
    if errors:
        if group.distributed:
            group.exit(1)
        return 1
    linger_on_shutdown = 0.0
    while True:
        body = None
        if group.rank == 0:
            try:
                body = read_frame(conn)
            except ConnectionClosed:
                body = pack({"id": -1, "cmd": "shutdown"})
        req = unpack(group.broadcast_bytes(body))
        if req["cmd"] == "shutdown":
            if group.rank == 0 and req["id"] >= 0:
                write_frame(conn, pack({"id": req["id"], "ok": True, "result": None}))
            if linger_on_shutdown > 0:
                time.sleep(linger_on_shutdown)
            if group.distributed:
                # Not destroy_process_group() and a normal exit: that raced the gloo worker thread and
                # could abort a rank under load (Group.exit says why).
                group.exit(0)
            return 0
        if req["cmd"] == "lingerOnShutdown":
            # For the test of a group that answers the shutdown but is slow to exit (torchrun waiting on
            # another node): after the answer the process sleeps this long before it exits.
            linger_on_shutdown = float((req.get("args") or {}).get("seconds", 0))
            if group.rank == 0:
                write_frame(conn, pack({"id": req["id"], "ok": True, "result": None}))
            continue
        result, error = None, None
        try:
            result = dispatch(engine, req["cmd"], req.get("args") or {})
        except Exception as e:  # noqa: BLE001 — every failure becomes an error reply
            error = describe(e)
            if not isinstance(e, (EngineError, SampleError)):
                traceback.print_exc(file=sys.stderr)
        errors = group.all_gather(error) if group.distributed else [error]
        failed = [(r, e) for r, e in enumerate(errors) if e]
        split = 0 < len(failed) < len(errors)
        if group.rank == 0:
            if failed:
                r, e = failed[0]
                msg = e if not split else f"rank {r} failed ({e}); the ranks are out of step, so the worker group stops"
                write_frame(conn, pack({"id": req["id"], "ok": False, "error": msg}))
            else:
                write_frame(conn, pack({"id": req["id"], "ok": True, "result": result}))
        if split:
            sys.stderr.flush()
            os._exit(3)
