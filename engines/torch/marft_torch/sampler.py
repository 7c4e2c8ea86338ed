"""Sampling with the KV cache of transformers (DynamicCache), for small checks and evaluation; at scale
sampling belongs to a serving engine. What it shares with the embedded engine (sampling.ts): the
distribution (temperature, then top-k keeping every token at or above the k-th largest logit, then
top-p keeping a token iff the mass ranked strictly above it is below top_p, ranks by probability then
token id), the log-prob returned (under the distribution drawn from; greedy: of the unscaled softmax),
the stop rules and that each request draws from its own generator seeded by (seed, request index). What
it does not share: the generator (torch.Generator rather than xoshiro128**), so the same seed gives
other tokens than the embedded engine's, though the same tokens run after run on the same machine.

Prompts are split across ranks; every rank runs one decoding step per loop turn (a placeholder one
when its own prompts are finished) until all ranks are done, since FSDP2's gathers are collectives.
Stop strings are applied by the TypeScript client, which has the tokenizer (src/engine/torch).
"""
import torch

from .parallel import split_by_tokens


class SampleError(Exception):
    pass


def _validate(engine, prompts, p):
    if not (p["temperature"] >= 0):
        raise SampleError(f"temperature must be >= 0, got {p['temperature']}")
    if not (0 < p["topP"] <= 1):
        raise SampleError(f"topP must be in (0, 1], got {p['topP']}")
    if not (isinstance(p["topK"], int) and p["topK"] >= 0):
        raise SampleError(f"topK must be a non-negative integer, got {p['topK']}")
    if not (isinstance(p["maxNewTokens"], int) and p["maxNewTokens"] >= 0):
        raise SampleError(f"maxNewTokens must be a non-negative integer, got {p['maxNewTokens']}")
    for i, pr in enumerate(prompts):
        if len(pr) == 0:
            raise SampleError(f"prompt {i} is empty")
        if len(pr) >= engine.max_positions:
            raise SampleError(f"prompt {i} has {len(pr)} tokens, the model's context is {engine.max_positions}")
        for t in pr:
            if not (isinstance(t, int) and 0 <= t < engine.vocab):
                raise SampleError(f"prompt {i}: token id {t} is outside the vocabulary (size {engine.vocab})")


def stream_seed(seed: int, index: int) -> int:
    """The generator seed of request `index` (a 63-bit mix, so nearby pairs give unrelated streams)."""
    x = (int(seed) * 0x9E3779B97F4A7C15 + (index + 1) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
    x ^= x >> 31
    return x & (2**63 - 1)


def draw(logits: torch.Tensor, p: dict, gen: torch.Generator) -> tuple[int, float]:
    """One token from one row of logits, and its log-prob under the distribution it was drawn from."""
    l = logits.double()
    if p["temperature"] == 0:
        tok = int(torch.argmax(l))
        return tok, float(torch.log_softmax(l, 0)[tok])
    V = l.shape[0]
    probs = torch.exp((l - l.max()) / p["temperature"])
    if 0 < p["topK"] < V:
        kth = torch.topk(l, p["topK"]).values[-1]
        probs = torch.where(l >= kth, probs, torch.zeros_like(probs))
    total = probs.sum()
    if p["topP"] < 1:
        order = torch.sort(-probs, stable=True).indices  # probability descending, then token id
        ranked = probs[order]
        keep = (torch.cumsum(ranked, 0) - ranked) < p["topP"] * total
        kept = torch.zeros_like(probs)
        kept[order[keep]] = ranked[keep]
        probs, total = kept, kept.sum()
    u = torch.rand((), generator=gen, dtype=torch.float64) * total
    cdf = torch.cumsum(probs, 0)
    tok = int(torch.searchsorted(cdf, u.reshape(1), right=True)[0])
    tok = min(tok, int(torch.nonzero(probs)[-1]))
    return tok, float(torch.log(probs[tok] / total))


@torch.no_grad()
def sample(engine, prompts: list, p: dict) -> list | None:
    _validate(engine, prompts, p)
    group, dev = engine.group, engine.group.device
    results = [{"tokens": [], "logprobs": [], "stopReason": "max_tokens"} for _ in prompts]
    if not prompts or p["maxNewTokens"] == 0:
        return results if group.rank == 0 else None
    max_ctx = min(engine.max_positions, max(len(x) for x in prompts) + p["maxNewTokens"])
    stop_ids = set(p["stopTokenIds"])
    mine = split_by_tokens([len(x) for x in prompts], group.world)[group.rank]
    gens = {i: torch.Generator().manual_seed(stream_seed(p["seed"], i)) for i in mine}
    running = list(mine)
    ids = mask = pos = cache = None
    if mine:
        width = max(len(prompts[i]) for i in mine)
        ids = torch.zeros((len(mine), width), dtype=torch.long)
        mask = torch.zeros((len(mine), width), dtype=torch.long)
        for k, i in enumerate(mine):  # left-padded, so every row's next token lands in the last column
            ids[k, width - len(prompts[i]):] = torch.tensor(prompts[i])
            mask[k, width - len(prompts[i]):] = 1
        ids, mask = ids.to(dev), mask.to(dev)
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
    while group.any(bool(running)):
        if not running:
            z = torch.zeros((1, 1), dtype=torch.long, device=dev)
            engine.scorer("decode", z, torch.ones_like(z), position_ids=z)
            continue
        logits, cache = engine.scorer("decode", ids, mask, position_ids=pos, past_key_values=cache)
        still = []
        for k, i in enumerate(mine):
            if i not in running:
                continue
            tok, lp = draw(logits[k], p, gens[i])
            r = results[i]
            r["tokens"].append(tok)
            r["logprobs"].append(lp)
            if tok in stop_ids:
                r["stopReason"] = "stop_token"
            elif len(r["tokens"]) >= p["maxNewTokens"]:
                r["stopReason"] = "max_tokens"
            elif len(prompts[i]) + len(r["tokens"]) >= max_ctx:
                r["stopReason"] = "context_full"
            else:
                still.append(i)
        running = still
        # Finished rows keep decoding their last token (ignored) so the batch keeps its shape.
        last = [results[i]["tokens"][-1] for i in mine]
        ids = torch.tensor(last, dtype=torch.long, device=dev)[:, None]
        mask = torch.cat([mask, torch.ones((len(mine), 1), dtype=torch.long, device=dev)], dim=1)
        pos = pos[:, -1:] + 1
    gathered = group.gather([(i, results[i]) for i in mine])
    if group.rank != 0:
        return None
    for part in gathered:
        for i, r in part:
            results[i] = r
    return results
