"""The root module every pass goes through: the Hugging Face causal LM plus the gathers and the
output projection on the scored positions only.

Under FSDP2 the root's own parameters (embeddings, final norm, lm_head) are gathered only while the
root's forward runs, so scoring, hidden states for critics and decoding steps are all modes of this
one forward rather than calls into submodules.

Log-probs of scored positions are computed in chunks of rows: the float32 logits of M positions over a
vocabulary V take 4·M·V bytes (a 32,768-token micro-batch over Qwen's 151,936 tokens: 20 GB, twice
that with the log-softmax's output), so each chunk's logits are recomputed in the backward
(activation checkpointing) instead of being kept. A chunk's log-prob is logit[target] − logsumexp.
"""
import torch
from torch.utils.checkpoint import checkpoint

# Float32 logits per chunk when the row count is not given: about 256 MB.
LOGITS_CHUNK_ELEMENTS = 1 << 26


def chunk_logprobs(h, weight, targets, temperature: float):
    """log softmax(h·Wᵀ / temperature)[target] for each row of h, in float32."""
    logits = h.float() @ weight.float().t()
    if temperature != 1.0:
        logits = logits / temperature
    return logits.gather(1, targets[:, None])[:, 0] - torch.logsumexp(logits, dim=-1)


class Scorer(torch.nn.Module):
    def __init__(self, lm, logits_chunk_rows: int = 0):
        super().__init__()
        self.lm = lm
        vocab = lm.lm_head.weight.shape[0]
        self.chunk_rows = logits_chunk_rows if logits_chunk_rows > 0 else max(1, LOGITS_CHUNK_ELEMENTS // vocab)

    def forward(self, mode: str, input_ids, attention_mask, rows_b=None, rows_t=None, targets=None,
                temperature: float = 1.0, position_ids=None, past_key_values=None):
        if mode == "decode":
            out = self.lm.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                                past_key_values=past_key_values, use_cache=True)
            h = out.last_hidden_state[:, -1, :]
            # Log-softmax and sampling in float32 whatever the base's dtype.
            logits = h.float() @ self.lm.lm_head.weight.float().t()
            return logits, out.past_key_values
        h = self.lm.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).last_hidden_state
        sel = h[rows_b, rows_t]  # [M, hidden]: the final normed hidden state of each scored position
        if mode == "hidden":
            return sel
        weight = self.lm.lm_head.weight
        rows = sel.shape[0]
        if rows <= self.chunk_rows:
            return chunk_logprobs(sel, weight, targets, temperature)
        # Recomputed in the backward only when a gradient is wanted (a retained graph); plain scoring
        # under no_grad keeps nothing either way.
        keep = torch.is_grad_enabled() and (sel.requires_grad or weight.requires_grad)
        parts = []
        for i in range(0, rows, self.chunk_rows):
            h_i, t_i = sel[i:i + self.chunk_rows], targets[i:i + self.chunk_rows]
            parts.append(checkpoint(chunk_logprobs, h_i, weight, t_i, temperature, use_reentrant=False)
                         if keep else chunk_logprobs(h_i, weight, t_i, temperature))
        return torch.cat(parts)
