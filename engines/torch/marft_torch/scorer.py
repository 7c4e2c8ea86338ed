"""The root module every pass goes through: the Hugging Face causal LM plus the gathers and the
output projection on the scored positions only.

Under FSDP2 the root's own parameters (embeddings, final norm, lm_head) are gathered only while the
root's forward runs, so scoring, hidden states for critics and decoding steps are all modes of this
one forward rather than calls into submodules.
"""
import torch


class Scorer(torch.nn.Module):
    def __init__(self, lm):
        super().__init__()
        self.lm = lm

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
        logits = sel.float() @ self.lm.lm_head.weight.float().t()
        if temperature != 1.0:
            logits = logits / temperature
        return torch.log_softmax(logits, dim=-1).gather(1, targets[:, None])[:, 0]
