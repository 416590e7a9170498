"""Programs of llama.cpp and whisper.cpp (Debian sid's, unpacked by scripts/ggml_clients.sh), run as
their users run them, with emu's ICD as the only Vulkan device (nvidia-h200) over a tiny
random-weight model that scripts/ggml_tiny_models.py writes: llama-simple's greedy generation
offloads every layer to the device (NV cooperative matrix 2 as on the real H200) and prints the
same tokens as the same program on ggml's CPU backend; whisper.cpp's whisper-bench loads the
generated whisper model whole and finishes on the CPU backend. Skipped, naming the fetch command,
where the packages are not unpacked."""
import importlib.util
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROMPT = "the emu runs"


def _tool(name):
    for p in (os.environ.get("EMU_GGML_CLIENTS"), ROOT / ".hwtmp/ggml_clients",
              Path("/work/main/.hwtmp/ggml_clients")):
        if p and (Path(p) / name).is_file():
            return Path(p) / name
    pytest.skip(f"{name} is not unpacked (bash scripts/ggml_clients.sh)")


def _models():
    spec = importlib.util.spec_from_file_location("ggml_tiny_models", ROOT / "scripts/ggml_tiny_models.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(args, driver_files, **extra):
    """The program's (stdout bytes, stderr text); VK_DRIVER_FILES names the only Vulkan driver
    (a missing file: none, so ggml runs on its CPU backend)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GGML_VK_", "VK_"))}
    env.update(VK_DRIVER_FILES=driver_files, VK_LOADER_LAYERS_DISABLE="*", **extra)
    r = subprocess.run([str(a) for a in args], env=env, capture_output=True, timeout=900)
    err = r.stderr.decode(errors="replace")
    assert r.returncode == 0, err[-3000:]
    return r.stdout, err


def test_llama_simple_greedy_tokens_match_cpu(manifest, tmp_path):
    tool = _tool("llama-simple")
    model = tmp_path / "tiny-llama.gguf"
    _models().write_llama(model, seed=0)
    args = [tool, "-m", model, "-n", "16", PROMPT]
    cpu, cpu_err = _run(args, str(tmp_path / "no-driver.json"))
    emu, err = _run(args, manifest)
    assert "ggml_vulkan:" not in cpu_err
    assert re.search(r"ggml_vulkan: 0 = emu 0\.1\.0 \(nvidia-h200: NVIDIA H200\) \(emu\) .*"
                     r"\| matrix cores: NV_coopmat2\n", err), err[:3000]
    assert "offloaded 3/3 layers to GPU" in err, err[-3000:]
    assert "emu vulkan:" not in err, err[-3000:]
    # the prompt (BOS, then byte-fallback tokens) echoed, then 16 generated tokens
    assert cpu.startswith(b"<s>\xe2\x96\x81the\xe2\x96\x81emu\xe2\x96\x81runs") and len(cpu) > 30, cpu
    assert emu == cpu


def test_tiny_whisper_model_loads_and_benches_on_cpu(tmp_path):
    """The whisper generator's file is one whisper.cpp loads whole (every tensor, the right shapes)
    and whisper-bench finishes on ggml's CPU backend. (On emu it finishes too, in 18 minutes on this
    machine, too long for a test: bench/vulkan_icd.md.)"""
    tool = _tool("whisper-bench")
    model = tmp_path / "tiny-whisper.bin"
    h = _models().write_whisper(model, seed=0)
    _, err = _run([tool, "-m", model, "-t", "1", "-ng"], str(tmp_path / "no-driver.json"))
    for k in ("n_vocab", "n_audio_ctx", "n_audio_state", "n_text_ctx", "n_text_layer", "n_mels"):
        assert re.search(rf"whisper_model_load: {k} += {h[k]}\n", err), err[:3000]
    assert "model size    =    1.39 MB" in err, err[:3000]
    assert re.search(r"decode time = +[\d.]+ ms / +256 runs", err), err[-3000:]
    assert re.search(r"prompt time = +[\d.]+ ms / +4096 runs", err), err[-3000:]
    assert "ggml_vulkan:" not in err and "error" not in err.lower(), err[-3000:]
