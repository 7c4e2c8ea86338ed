"""LoRA adapters over the frozen base, several at once, the active one chosen per forward.

For each wrapped linear module of each layer, y = x Wᵀ + b + (alpha / rank) · (x Aᵀ) Bᵀ with
A [rank, in] and B [out, rank] (PEFT's LoraLayer, dropout 0). The factors are plain float32 tensors
held here, outside the model's module tree, and added by forward hooks on the base's nn.Linear
modules rather than by PEFT's LoraModel: FSDP2 fixes the set of parameters it shards when
fully_shard is called, while adapters come and go during a run, and PEFT's set_adapter changes
requires_grad behind the caller's back. Adapters are small, so every rank holds all of them
(replicated); their gradients are summed across ranks before an optimiser step (engine.py).
"""
import torch

ALL_LINEAR_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
ATTENTION_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj")


class LoraAdapter:
    def __init__(self, rank: int, alpha: float, target_modules: list[str]):
        self.rank = rank
        self.alpha = alpha
        self.target_modules = list(target_modules)
        self.scale = alpha / rank
        # (layer, module) → (A, B), inserted layer by layer in target_modules order: the parameter
        # order of the embedded engine (src/engine/embedded/lora.ts, loraParams), which optimiser
        # state files follow.
        self.factors: dict[tuple[int, str], tuple[torch.Tensor, torch.Tensor]] = {}

    def params(self) -> list[torch.Tensor]:
        out = []
        for a, b in self.factors.values():
            out += [a, b]
        return out


def linear_module(model, layer: int, module: str) -> torch.nn.Linear:
    block = model.model.layers[layer]
    return getattr(block.self_attn if module in ATTENTION_MODULES else block.mlp, module)


class LoraHooks:
    """Forward hooks on every linear module LoRA may wrap; they add the active adapter's update."""

    def __init__(self, model):
        self.active: LoraAdapter | None = None
        self.handles = []
        for i in range(len(model.model.layers)):
            for m in ALL_LINEAR_MODULES:
                self.handles.append(linear_module(model, i, m).register_forward_hook(self._hook(i, m)))

    def _hook(self, layer: int, module: str):
        key = (layer, module)

        def hook(_mod, inputs, output):
            adapter = self.active
            if adapter is None:
                return None
            ab = adapter.factors.get(key)
            if ab is None:
                return None
            a, b = ab
            x = inputs[0]
            # The adapter computes in float32 whatever the base's dtype (bf16 on GPUs).
            delta = (x.to(a.dtype) @ a.t()) @ b.t()
            return output + (adapter.scale * delta).to(output.dtype)

        return hook
