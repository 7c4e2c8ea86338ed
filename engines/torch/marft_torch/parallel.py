"""The worker group: one process per device, rank 0 talking to the controller.

Started by torchrun (WORLD_SIZE, RANK, LOCAL_RANK, MASTER_ADDR in the environment) the processes form a
torch.distributed group (gloo on the CPU, NCCL on GPUs); started alone, there is no group and every
collective below is the identity. Rank 0 broadcasts each command to every rank, so all ranks hold the
same state and run the same collectives in the same order.
"""
import datetime
import os
import sys

import torch
import torch.distributed as dist


class Group:
    def __init__(self, device: str | None):
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        if device is None or device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if device == "cuda":
            torch.cuda.set_device(local_rank)
            self.device = torch.device("cuda", local_rank)
        else:
            self.device = torch.device(device)
        if self.world > 1:
            backend = "nccl" if self.device.type == "cuda" else "gloo"
            # A rank that dies makes torchrun stop the others; the timeout bounds any other stall.
            dist.init_process_group(backend=backend, timeout=datetime.timedelta(minutes=30))

    @property
    def distributed(self) -> bool:
        return self.world > 1

    def broadcast_bytes(self, body: bytes | None) -> bytes:
        """Rank 0's `body` on every rank."""
        if not self.distributed:
            return body
        box = [body]
        dist.broadcast_object_list(box, src=0, device=self.device if self.device.type == "cuda" else None)
        return box[0]

    def gather(self, obj) -> list | None:
        """Every rank's `obj`, in rank order, on rank 0 (None elsewhere)."""
        if not self.distributed:
            return [obj]
        out = [None] * self.world if self.rank == 0 else None
        dist.gather_object(obj, out, dst=0)
        return out

    def all_gather(self, obj) -> list:
        if not self.distributed:
            return [obj]
        out = [None] * self.world
        dist.all_gather_object(out, obj)
        return out

    def all_reduce_sum_(self, t: torch.Tensor) -> torch.Tensor:
        if self.distributed:
            dist.all_reduce(t, op=dist.ReduceOp.SUM)
        return t

    def any(self, flag: bool) -> bool:
        """Whether `flag` holds on some rank."""
        if not self.distributed:
            return flag
        t = torch.tensor([1.0 if flag else 0.0], device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return bool(t.item() > 0)

    def exit(self, code: int):
        """Ends this rank's process with `code` once every rank has got here; only in a group (a single
        process returns from serve and exits as usual).

        Why not destroy_process_group() and a normal interpreter exit: the gloo worker thread frees a
        finished collective's work object (its tensors) on its own, possibly after the main thread has
        moved on. Under load that came after the main thread had started interpreter finalization: the
        tensor's release took the GIL, Python ended the thread, the unwind went through a noexcept
        destructor and the rank died with SIGABRT ('terminate called without an active exception'; core
        dump: ProcessGroupGloo::runLoop > ~AsyncBroadcastWork > decref_pyobject > take_gil >
        pthread_exit > std::terminate). destroy_process_group() does not wait for that thread, and one
        more collective before it does not help either (it leaves its own work object to free). A rank
        that fails makes its torchrun skip the exit barrier, so torchrun on the controller's node waited
        there for a node that had already gone, until dispose killed it after its timeout.

        So: one all-reduce as a barrier (each rank's result needs every rank's contribution, so no rank
        leaves before all have the shutdown and have finished their last collective; .item() waits for
        it on a GPU too), then os._exit, which runs no finalization and no C++ destructor for any thread
        to race with; the sockets close with the process, and a peer's data already sent is still
        delivered. stdout and stderr are flushed first, since os._exit does not.
        """
        done = torch.zeros(1, device=self.device)
        dist.all_reduce(done, op=dist.ReduceOp.SUM)
        done.item()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def split_by_tokens(lengths: list[int], world: int) -> list[list[int]]:
    """Indices of the items each rank takes: longest first onto the least-loaded rank (ties: lowest rank,
    then lowest index), so every rank computes the same plan from the same command."""
    load = [0] * world
    parts: list[list[int]] = [[] for _ in range(world)]
    for i in sorted(range(len(lengths)), key=lambda i: (-lengths[i], i)):
        r = min(range(world), key=lambda r: (load[r], r))
        parts[r].append(i)
        load[r] += lengths[i]
    for p in parts:
        p.sort()
    return parts
