"""python -m marft_torch [--socket PATH] --model DIR [--dtype float32|bfloat16] [--device auto|cpu|cuda] [--threads N]
    [--logits-chunk-rows N]

Run by the TypeScript client (src/engine/torch), directly for one process or under torchrun for
several; not meant to be started by hand."""
import argparse
import os
import sys

import torch

from .worker import serve


def main() -> int:
    ap = argparse.ArgumentParser(prog="python -m marft_torch")
    ap.add_argument("--socket", help="the controller's Unix socket (rank 0 connects to it; other machines' ranks need none)")
    ap.add_argument("--model", required=True, help="Hugging Face model folder")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    ap.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads per process (0: torch's default)")
    ap.add_argument("--logits-chunk-rows", type=int, default=0,
                    help="scored positions per log-softmax chunk (0: about 256 MB of float32 logits per chunk)")
    args = ap.parse_args()
    if args.socket is None and os.environ.get("RANK", "0") == "0":
        ap.error("--socket is required on rank 0 (the process the controller talks to)")
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    return serve(args.socket, args.model, args.dtype, args.device, args.logits_chunk_rows)


if __name__ == "__main__":
    sys.exit(main())
