"""The machine code inside NVIDIA pipeline-cache blobs (scripts/h200_sass.py), as SASS text.

    python scripts/sass_read.py CACHE_DIR OUT_DIR [--nvdisasm PATH]

NVIDIA's VkPipelineCache data (driver 580) is a header, then one zstd frame. Inside, after the
driver's own records, is the compute shader's SM90 code: 16-byte instructions ending in EXIT and the
`BRA` to itself that pads every kernel. This finds that tail, disassembles backwards to the first
offset nvdisasm does not take as an instruction, and writes OUT_DIR/NAME.sass. Needs the `zstd`
command and nvdisasm (the `nvidia-cuda-nvdisasm` wheel from PyPI); skips, saying so, without them.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ZSTD_MAGIC = bytes.fromhex("28b52ffd")
SELF_BRANCH = re.compile(re.escape(bytes.fromhex("4779fc00fcffffffffff8303")))   # BRA to itself
ERROR_AT = re.compile(r"at address 0x([0-9a-f]+)")


def unpack(blob: bytes) -> bytes:
    k = blob.find(ZSTD_MAGIC)
    if k < 0:
        raise ValueError("no zstd frame")
    return subprocess.run(["zstd", "-d", "-c"], input=blob[k:], capture_output=True, check=True).stdout


def code_of(raw: bytes, nvdisasm: str) -> str:
    m = SELF_BRANCH.search(raw)
    if not m:
        raise ValueError("no end of kernel (BRA to itself)")
    end = m.start() + 16
    start = end % 16
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        for _ in range(4):
            f.seek(0), f.truncate(), f.write(raw[start:end]), f.flush()
            r = subprocess.run([nvdisasm, "-b", "SM90", f.name], capture_output=True, text=True)
            bad = [int(a, 16) for a in ERROR_AT.findall(r.stderr)]
            if not bad and r.returncode == 0:
                return r.stdout
            start += (max(bad) + 16) if bad else 16
    raise ValueError("nvdisasm did not settle: " + r.stderr[:200])


def main(argv) -> int:
    cache, out = Path(argv[0]), Path(argv[1])
    nvdisasm = argv[argv.index("--nvdisasm") + 1] if "--nvdisasm" in argv else shutil.which("nvdisasm")
    if not nvdisasm or not shutil.which("zstd"):
        print("sass_read: skipped: needs nvdisasm (pip install nvidia-cuda-nvdisasm) and zstd")
        return 0
    out.mkdir(parents=True, exist_ok=True)
    bad = {}
    files = sorted(cache.glob("*.bin"))
    for f in files:
        try:
            (out / f"{f.stem}.sass").write_text(code_of(unpack(f.read_bytes()), nvdisasm))
        except (ValueError, subprocess.CalledProcessError) as e:
            bad[f.stem] = str(e)
    print(f"{len(files) - len(bad)} of {len(files)} disassembled; failed: {dict(list(bad.items())[:5])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
