"""A critic's head on the final normed hidden state: hidden → h1 → … → 1, ReLU between layers (one
linear layer hidden → 1 for the LoRA critic), as src/engine/trainables.ts defines it (the embedded
engine's passes: src/engine/embedded/value-head.ts).
Its weights are replicated on every rank, outside the model's module tree, like the adapters."""
import torch


class ValueHead:
    def __init__(self, layers: list[tuple[torch.Tensor, torch.Tensor]]):
        self.layers = layers  # (W [out, in], b [out]) per layer

    def params(self) -> list[torch.Tensor]:
        out = []
        for w, b in self.layers:
            out += [w, b]
        return out

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """x [M, hidden] → values [M]."""
        h = x.float()
        for i, (w, b) in enumerate(self.layers):
            h = h @ w.t() + b
            if i + 1 < len(self.layers):
                h = torch.relu(h)
        return h[:, 0]


class Critic:
    def __init__(self, spec: dict, lora, head: ValueHead):
        self.spec = spec
        self.lora = lora  # LoraAdapter or None (frozen base + MLP head)
        self.head = head

    def params(self) -> list[torch.Tensor]:
        return (self.lora.params() if self.lora else []) + self.head.params()
