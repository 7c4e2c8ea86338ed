"""The torch engine's state and the commands that mirror the Engine interface (src/engine/types.ts).

Every rank runs every command with the same arguments (worker.py). A scoring batch is split across
ranks by tokens (data parallel); each rank runs exactly one forward per command, a placeholder one when
it got no sequence, because FSDP2's gathers are collectives every rank must join. Results are gathered
to rank 0, which alone answers; the other ranks' return values are ignored.
"""
import math

import torch

from .adamw import AdamState, adamw_step
from .framing import f32_bytes, f32_tensor
from .lora import LoraAdapter, LoraHooks, linear_module
from .parallel import Group, split_by_tokens
from .sampler import sample
from .scorer import Scorer
from .value_head import Critic, ValueHead

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


class EngineError(Exception):
    """A caller mistake or an impossible request, reported to the controller as an error reply."""


class Graph:
    def __init__(self, target: dict, counts: list[int], mine: list[int], out: torch.Tensor | None):
        self.target = target
        self.counts = counts  # scored tokens per request of the whole batch
        self.mine = mine      # the requests this rank forwarded, in order
        self.out = out        # this rank's log-probs or values, concatenated over `mine`


class TorchEngine:
    def __init__(self, group: Group, model_dir: str, dtype: str, logits_chunk_rows: int = 0):
        from transformers import AutoModelForCausalLM

        if dtype not in DTYPES:
            raise EngineError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
        self.group = group
        self.dtype = dtype
        lm = AutoModelForCausalLM.from_pretrained(model_dir, dtype=DTYPES[dtype])
        lm.requires_grad_(False)
        lm.eval()  # dropout off; the embedded engine has none
        self.lm = lm.to(group.device)
        self.vocab = self.lm.config.vocab_size
        self.max_positions = self.lm.config.max_position_embeddings
        self.hooks = LoraHooks(self.lm)
        self.scorer = Scorer(self.lm, logits_chunk_rows)
        self.base_loss_scale = 1.0
        if group.distributed:
            self._shard()
        self.adapters: dict[str, LoraAdapter] = {}
        self.critics: dict[str, Critic] = {}
        self.optim: dict[str, AdamState] = {}
        self.graphs: dict[int, Graph] = {}
        self.next_graph = 1
        self.base_trainable = False

    def _shard(self):
        """FSDP2: each decoder layer its own unit, the root (embeddings, final norm, lm_head) another.
        Gradients of a trainable base are summed across ranks, not averaged (the controller's losses
        are already normalised over the whole batch)."""
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        mesh = init_device_mesh(self.group.device.type, (self.group.world,))
        units = [fully_shard(layer, mesh=mesh) for layer in self.lm.model.layers]
        units.append(fully_shard(self.scorer, mesh=mesh))
        # Gloo has no pre-multiplied sum (PREMUL_SUM), so on the CPU FSDP2 keeps averaging and the
        # base's loss is scaled by the world size instead (backward); the two-process test checks the sum.
        if self.group.device.type == "cuda":
            for u in units:
                u.set_gradient_divide_factor(1.0)
        else:
            self.base_loss_scale = float(self.group.world)

    # ---- information -------------------------------------------------------------------------

    def info(self) -> dict:
        import transformers

        return {"worldSize": self.group.world, "device": str(self.group.device), "dtype": self.dtype,
                "torch": torch.__version__, "transformers": transformers.__version__,
                "sharded": self.group.distributed, "logitsChunkRows": self.scorer.chunk_rows}

    # ---- adapters and critics ----------------------------------------------------------------

    def _adapter_from(self, msg: dict) -> LoraAdapter:
        a = LoraAdapter(int(msg["rank"]), float(msg["alpha"]), msg["targetModules"])
        layers = len(self.lm.model.layers)
        for f in msg["factors"]:
            layer, module = int(f["layer"]), f["module"]
            if not 0 <= layer < layers or module not in a.target_modules:
                raise EngineError(f"adapter factor for layer {layer} {module} does not fit this model / adapter")
            lin = linear_module(self.lm, layer, module)
            A = f32_tensor(f["A"], (a.rank, lin.in_features), self.group.device).requires_grad_(True)
            B = f32_tensor(f["B"], (lin.out_features, a.rank), self.group.device).requires_grad_(True)
            a.factors[(layer, module)] = (A, B)
        return a

    @staticmethod
    def _adapter_msg(a: LoraAdapter) -> dict:
        return {"rank": a.rank, "alpha": a.alpha, "targetModules": a.target_modules,
                "factors": [{"layer": l, "module": m, "A": f32_bytes(A), "B": f32_bytes(B)}
                            for (l, m), (A, B) in a.factors.items()]}

    def put_adapter(self, name: str, adapter: dict):
        self.adapters[name] = self._adapter_from(adapter)
        self.optim.pop(f"adapter:{name}", None)

    def get_adapter(self, name: str) -> dict:
        return self._adapter_msg(self._adapter(name))

    def delete_adapter(self, name: str):
        self._adapter(name)
        del self.adapters[name]
        self.optim.pop(f"adapter:{name}", None)

    def put_critic(self, name: str, spec: dict, head: list, adapter: dict | None):
        layers = []
        for i, l in enumerate(head):
            out_f, in_f = l["shape"]
            W = f32_tensor(l["W"], (out_f, in_f), self.group.device).requires_grad_(True)
            b = f32_tensor(l["b"], (out_f,), self.group.device).requires_grad_(True)
            layers.append((W, b))
        lora = self._adapter_from(adapter) if adapter is not None else None
        self.critics[name] = Critic(spec, lora, ValueHead(layers))
        self.optim.pop(f"critic:{name}", None)

    def get_critic(self, name: str) -> dict:
        c = self._critic(name)
        return {"spec": c.spec, "adapter": self._adapter_msg(c.lora) if c.lora else None,
                "head": [{"shape": list(W.shape), "W": f32_bytes(W), "b": f32_bytes(b)} for W, b in c.head.layers]}

    def _adapter(self, name: str) -> LoraAdapter:
        if name not in self.adapters:
            raise EngineError(f"no adapter named '{name}' (have: {', '.join(self.adapters) or 'none'})")
        return self.adapters[name]

    def _critic(self, name: str) -> Critic:
        if name not in self.critics:
            raise EngineError(f"no critic named '{name}' (have: {', '.join(self.critics) or 'none'})")
        return self.critics[name]

    # ---- the base ----------------------------------------------------------------------------

    def set_base_trainable(self, trainable: bool):
        self.base_trainable = bool(trainable)
        for p in self.lm.parameters():
            p.requires_grad_(self.base_trainable)
            if not self.base_trainable:
                p.grad = None

    def save_base(self, dir: str):
        """transformers' save_pretrained (rank 0 writes; under FSDP2 every rank helps gather each tensor)."""
        if self.group.distributed:
            from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

            state = get_model_state_dict(self.scorer, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
            state = {k.removeprefix("lm."): v for k, v in state.items()}
        else:
            state = None
        if self.group.rank == 0:
            if state is None:
                self.lm.save_pretrained(dir, safe_serialization=True)
            else:
                self.lm.save_pretrained(dir, state_dict=state, safe_serialization=True)

    # ---- scoring -----------------------------------------------------------------------------

    def _validate_batch(self, batch: list) -> list[int]:
        counts = []
        for b, req in enumerate(batch):
            tokens, sf = req["tokens"], req["scoreFrom"]
            n = len(tokens)
            if not isinstance(sf, int) or sf < 1 or sf > n:
                raise EngineError(f"request {b}: scoreFrom must be an integer in [1, {n}], got {sf}")
            for t in tokens:
                if not (isinstance(t, int) and 0 <= t < self.vocab):
                    raise EngineError(f"request {b}: token id {t} is outside the vocabulary (size {self.vocab})")
            if n - 1 > self.max_positions:
                raise EngineError(f"request {b}: {n} tokens exceed the model's context of {self.max_positions}")
            counts.append(n - sf)
        return counts

    def _lora_of(self, target: dict):
        kind = target.get("kind")
        if kind == "base":
            return None
        if kind == "adapter":
            return self._adapter(target["name"])
        if kind == "critic":
            return self._critic(target["name"]).lora
        raise EngineError(f"unknown target kind {kind!r}")

    def forward(self, target: dict, batch: list, temperature, retain: bool):
        lora = self._lora_of(target)
        critic = self._critic(target["name"]) if target["kind"] == "critic" else None
        counts = self._validate_batch(batch)
        if temperature is not None and not (temperature >= 0 and math.isfinite(temperature)):
            raise EngineError(f"temperature must be a finite number >= 0, got {temperature}")
        temp = 1.0 if temperature in (None, 0) else float(temperature)
        scored = [i for i, c in enumerate(counts) if c > 0]
        parts = split_by_tokens([len(batch[i]["tokens"]) - 1 for i in scored], self.group.world)
        mine = [scored[j] for j in parts[self.group.rank]]
        # What gradients this pass needs: the adapter's, the critic's LoRA, or the base's.
        through_base = retain and (lora is not None or (target["kind"] == "base" and self.base_trainable))
        out = None
        if scored:
            ids, mask, rows_b, rows_t, targets = self._pack([batch[i] for i in mine])
            self.hooks.active = lora
            try:
                with torch.set_grad_enabled(through_base):
                    out = self.scorer("hidden" if critic else "lm", ids, mask, rows_b, rows_t, targets, temp)
            finally:
                self.hooks.active = None
            if critic:
                with torch.set_grad_enabled(retain):
                    out = critic.head(out)
        handle = None
        if retain:
            handle = self.next_graph
            self.next_graph += 1
            self.graphs[handle] = Graph(target, counts, mine, out)
        pieces = []
        if out is not None:
            flat = out.detach()
            o = 0
            for i in mine:
                pieces.append((i, f32_bytes(flat[o:o + counts[i]])))
                o += counts[i]
        gathered = self.group.gather(pieces)
        if self.group.rank != 0:
            return None
        arrays = [b"" for _ in batch]
        for rank_pieces in gathered:
            for i, b in rank_pieces:
                arrays[i] = b
        result = {"values" if critic else "logprobs": arrays}
        if handle is not None:
            result["handle"] = handle
        return result

    def _pack(self, reqs: list):
        """Right-padded inputs (every token but the last) and the scored positions. A rank with no
        request forwards one placeholder token and scores nothing."""
        dev = self.group.device
        if not reqs:
            z = torch.zeros((1, 1), dtype=torch.long, device=dev)
            e = torch.zeros((0,), dtype=torch.long, device=dev)
            return z, torch.ones_like(z), e, e, e
        width = max(len(r["tokens"]) - 1 for r in reqs)
        ids = torch.zeros((len(reqs), width), dtype=torch.long)
        mask = torch.zeros((len(reqs), width), dtype=torch.long)
        rows_b, rows_t, targets = [], [], []
        for b, r in enumerate(reqs):
            t, sf = r["tokens"], r["scoreFrom"]
            ids[b, :len(t) - 1] = torch.tensor(t[:-1])
            mask[b, :len(t) - 1] = 1
            for k in range(len(t) - sf):
                rows_b.append(b)
                rows_t.append(sf - 1 + k)
                targets.append(t[sf + k])
        as_long = lambda x: torch.tensor(x, dtype=torch.long, device=dev)
        return ids.to(dev), mask.to(dev), as_long(rows_b), as_long(rows_t), as_long(targets)

    def backward(self, handle: int, d_logprobs, d_values):
        g = self.graphs.pop(handle, None)
        if g is None:
            raise EngineError(f"graph {handle} is unknown or was already consumed by a backward")
        critic = g.target["kind"] == "critic"
        if g.target["kind"] == "base" and not self.base_trainable:
            raise EngineError("the base is frozen: call setBaseTrainable(true) before a backward through the base")
        grads = d_values if critic else d_logprobs
        label = "dValues" if critic else "dLogprobs"
        if grads is None or len(grads) != len(g.counts):
            raise EngineError(f"{label}: expected {len(g.counts)} arrays (one per request), got {0 if grads is None else len(grads)}")
        for i, (b, c) in enumerate(zip(grads, g.counts)):
            if len(b) != 4 * c:
                raise EngineError(f"{label}[{i}]: expected {c} values, got {len(b) // 4}")
        if g.out is None or not g.out.requires_grad:
            return None
        w = torch.cat([f32_tensor(grads[i]) for i in g.mine]) if g.mine else torch.zeros(0)
        loss = (g.out * w.to(g.out.device)).sum()
        if g.target["kind"] == "base":
            (loss * self.base_loss_scale).backward()
        else:
            # Only the target's own parameters accumulate (as in the embedded engine), even when the
            # base is trainable too.
            own = self._lora_of(g.target).params() if g.target["kind"] == "adapter" else self._critic(g.target["name"]).params()
            loss.backward(inputs=[p for p in own])
        return None

    def release_graph(self, handle: int):
        self.graphs.pop(handle, None)

    # ---- optimisation ------------------------------------------------------------------------

    def _trainable(self, t: dict) -> tuple[str, list[torch.Tensor], bool]:
        """(optimiser key, parameters, whether they are replicated across ranks)."""
        kind = t.get("kind")
        if kind == "adapter":
            return f"adapter:{t['name']}", self._adapter(t["name"]).params(), True
        if kind == "critic":
            return f"critic:{t['name']}", self._critic(t["name"]).params(), True
        if kind == "base":
            if not self.base_trainable:
                raise EngineError("the base is frozen: call setBaseTrainable(true) first")
            return "base", list(self.lm.parameters()), False
        raise EngineError(f"unknown trainable kind {kind!r}")

    def optim_step(self, trainable: dict, params: dict) -> dict:
        key, ps, replicated = self._trainable(trainable)
        if replicated and self.group.distributed:
            # Each rank holds the gradient of its own share of the batch: the sum is the batch's.
            for p in ps:
                if p.grad is None:
                    p.grad = torch.zeros_like(p)
                self.group.all_reduce_sum_(p.grad)
        state = self.optim.get(key)
        if state is None:
            state = self.optim[key] = AdamState(ps)
        norm = adamw_step(ps, state, params)
        self._zero(ps)
        return {"gradNorm": norm}

    @staticmethod
    def _zero(ps):
        for p in ps:
            if p.grad is not None:
                p.grad.zero_()

    def param_sizes(self, trainable: dict) -> list[int]:
        """Element counts of the trainable's parameters, in optimiser order (whole tensors, not shards)."""
        return [p.numel() for p in self._trainable(trainable)[1]]

    def zero_grad(self, trainable: dict):
        self._zero(self._trainable(trainable)[1])

    def get_optim_state(self, trainable: dict) -> dict:
        key, ps, _ = self._trainable(trainable)
        state = self.optim.get(key) or AdamState(ps)
        return {"label": key, "step": state.step, "m": [_full_bytes(m) for m in state.m], "v": [_full_bytes(v) for v in state.v]}

    def put_optim_state(self, trainable: dict, step: int, m: list, v: list):
        key, ps, replicated = self._trainable(trainable)
        if len(m) != len(ps) or len(v) != len(ps) or any(len(b) != 4 * p.numel() for b, p in zip(m + v, ps + ps)):
            raise EngineError(f"optimiser state holds different parameters ({len(m)} tensors) than this trainable ({len(ps)})")
        if not replicated and self.group.distributed:
            raise EngineError("loading the base's optimiser state into a sharded base is not supported yet")
        state = AdamState(ps)
        state.step = int(step)
        state.m = [f32_tensor(b, p.shape, self.group.device) for b, p in zip(m, ps)]
        state.v = [f32_tensor(b, p.shape, self.group.device) for b, p in zip(v, ps)]
        self.optim[key] = state

    # ---- sampling ----------------------------------------------------------------------------

    def sample(self, target: dict, prompts: list, params: dict):
        if target.get("kind") == "critic":
            raise EngineError("cannot sample from a critic target")
        lora = self._lora_of(target)
        self.hooks.active = lora
        try:
            return sample(self, prompts, params)
        finally:
            self.hooks.active = None


def _full_bytes(t: torch.Tensor) -> bytes:
    return f32_bytes(t.full_tensor() if hasattr(t, "full_tensor") else t)
