"""AdamW with global-norm gradient clipping, operation for operation as the embedded engine's adamw.ts
(itself torch.optim.AdamW with foreach=False and torch.nn.utils.clip_grad_norm_):
  clip: total = ‖(‖g_i‖)_i‖₂; coef = min(1, max_norm / (total + 1e-6)); g ← g·coef
  p ← p·(1 − lr·wd); m ← m + (g − m)(1 − β1); v ← β2·v + (1 − β2)·g²
  p ← p − (lr / (1 − β1^t)) · m / (√v / √(1 − β2^t) + eps)
Every tensor operation runs in float32 like the embedded engine's Math.fround steps; a missing
gradient counts as zero (the parameter still decays and its moments still move), as there.
"""
import math

import numpy as np
import torch


class AdamState:
    def __init__(self, params: list[torch.Tensor]):
        self.step = 0
        self.m = [torch.zeros_like(p, dtype=torch.float32) for p in params]
        self.v = [torch.zeros_like(p, dtype=torch.float32) for p in params]


def _local(t):
    """The local shard of a DTensor (FSDP2), the tensor itself otherwise: updates are elementwise."""
    return t.to_local() if hasattr(t, "to_local") else t


def grad_norm(params: list[torch.Tensor]) -> float:
    total = 0.0
    for p in params:
        if p.grad is None:
            continue
        n = torch.linalg.vector_norm(p.grad.float())
        if hasattr(n, "full_tensor"):
            n = n.full_tensor()
        total += float(np.float32(n.item())) ** 2
    return float(np.float32(math.sqrt(total)))


@torch.no_grad()
def adamw_step(params: list[torch.Tensor], state: AdamState, o: dict) -> float:
    """One step (clipping first); returns the pre-clip gradient norm. Gradients are left untouched."""
    if len(state.m) != len(params):
        raise ValueError("optimiser state does not match the trainable parameters")
    norm = grad_norm(params)
    coef = min(1.0, float(np.float32(o["maxGradNorm"] / (norm + 1e-6)))) if o["maxGradNorm"] > 0 else 1.0
    state.step += 1
    t = state.step
    bc1 = 1 - o["beta1"] ** t
    bc2_sqrt = math.sqrt(1 - o["beta2"] ** t)
    step_size = o["lr"] / bc1
    decay = float(np.float32(1 - o["lr"] * o["weightDecay"]))
    one_minus_b1 = float(np.float32(1 - o["beta1"]))
    one_minus_b2 = float(np.float32(1 - o["beta2"]))
    for p, m, v in zip(params, state.m, state.v):
        w, m, v = _local(p.data), _local(m), _local(v)
        g = torch.zeros_like(w, dtype=torch.float32) if p.grad is None else _local(p.grad).float()
        if coef != 1.0:
            g = g * coef
        if o["weightDecay"] != 0:
            w.mul_(decay)
        m.add_((g - m) * one_minus_b1)
        v.mul_(o["beta2"]).add_((g * g) * one_minus_b2)
        denom = (v.sqrt() / bc2_sqrt) + o["eps"]
        w.sub_(step_size * (m / denom))
    return norm
