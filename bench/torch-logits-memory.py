"""Peak memory of the torch engine's scoring with log-probs in chunks of rows against one piece.

Builds a one-layer random Qwen2 with Qwen's 151,936-token vocabulary (tied embeddings, hidden 64: the
logits dominate), scores 2 × 2,048 positions through engines/torch/marft_torch/scorer.py with a graph
kept and runs the backward, once with the worker's default chunking and once with every row in one
chunk (the engine before chunking), each in a fresh process so that peak RSS is its own. CPU, float32.
Ends with one JSON line: {"scored", "vocab", "oneChunkExtraMB", "chunkedExtraMB", "chunkRows", "ratio"}.

    .venv-torch/bin/python bench/torch-logits-memory.py
"""
import json
import os
import resource
import subprocess
import sys

VOCAB, B, T = 151936, 2, 2048


def measure(chunk_rows: int) -> dict:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from marft_torch.scorer import Scorer

    torch.manual_seed(0)
    torch.set_num_threads(1)
    cfg = Qwen2Config(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                      num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True)
    lm = Qwen2ForCausalLM(cfg).eval()
    lm.requires_grad_(False)
    lm.model.norm.weight.requires_grad_(True)  # a parameter below the logits, so the backward runs through them
    scorer = Scorer(lm, chunk_rows)
    ids = torch.randint(0, VOCAB, (B, T))
    rows_b, rows_t = torch.arange(B).repeat_interleave(T), torch.arange(T).repeat(B)
    targets = torch.randint(0, VOCAB, (B * T,))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    scorer("lm", ids, torch.ones(B, T, dtype=torch.long), rows_b, rows_t, targets).sum().backward()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"chunkRows": scorer.chunk_rows, "extraMB": round((after - before) / 1024)}


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(measure(int(sys.argv[2]))))
        return 0
    here = os.path.dirname(os.path.abspath(__file__))
    env = {**os.environ, "PYTHONPATH": os.path.join(here, "..", "engines", "torch")}
    run = lambda rows: json.loads(subprocess.run([sys.executable, __file__, "--child", str(rows)], env=env, check=True,
                                                 capture_output=True, text=True).stdout.strip().splitlines()[-1])
    one, chunked = run(B * T), run(0)
    print(f"one chunk of {one['chunkRows']} rows: +{one['extraMB']} MB; chunks of {chunked['chunkRows']} rows: +{chunked['extraMB']} MB")
    print(json.dumps({"scored": B * T, "vocab": VOCAB, "oneChunkExtraMB": one["extraMB"], "chunkedExtraMB": chunked["extraMB"],
                      "chunkRows": chunked["chunkRows"], "ratio": round(one["extraMB"] / max(1, chunked["extraMB"]), 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
