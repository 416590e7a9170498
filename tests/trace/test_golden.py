"""traces/ matches what emu produces now (python -m emu.trace.golden regenerates it)."""
from pathlib import Path

from emu.trace import golden
from emu.trace.schema import validate_trace_file

ROOT = Path(__file__).resolve().parents[2] / "traces"


def test_golden_traces_unchanged():
    problems = golden.check(ROOT)
    assert problems == [], ("golden traces changed; if intended, run `python -m emu.trace.golden`:\n"
                            + "\n".join(problems))


def test_golden_files_are_small_and_valid():
    # the golden outputs, not the notes beside them (traces/hw/README.md grows with each recording)
    files = [p for p in ROOT.rglob("*") if p.is_file() and p.suffix != ".md"]
    assert sum(p.stat().st_size for p in files) < 600 * 1024
    for p in ROOT.glob("*.jsonl"):
        assert validate_trace_file(p) == [], p
    for p in (ROOT / "explain").glob("*.txt"):
        assert "(same bits: reproduced)" in p.read_text(), p


def test_check_reports_a_change(tmp_path):
    golden.write(tmp_path)
    f = tmp_path / "gemm_wgpu.reference.jsonl"
    lines = f.read_text().splitlines(keepends=True)
    lines[3] = lines[3].replace('"bits":"0x', '"bits":"0x1', 1)
    f.write_text("".join(lines))
    (tmp_path / "lanes" / "reference.A.svg").unlink()
    problems = golden.check(tmp_path)
    assert any("gemm_wgpu.reference.jsonl: differs: line 4" in p and "bits" in p for p in problems)
    assert any("reference.A.svg: missing" in p for p in problems)
