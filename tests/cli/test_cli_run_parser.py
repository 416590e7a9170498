"""`emu run ...` is parsed by run's parser alone (emu.cli.build_parser("run")); every command line
it rejects is said as the whole parser says it, and what it accepts parses to the same values."""
import contextlib
import io

import pytest

from emu import cli

BAD = [["run"], ["run", "--dispatch"], ["run", "x.wgsl"], ["run", "--dispach", "4", "x.wgsl"],
       ["run", "--dispatch", "4", "--profle", "h200", "x.wgsl"], ["run", "--dispatch", "4", "x.wgsl", "extra"],
       ["run", "--jobs", "x", "--dispatch", "4", "x.wgsl"], ["run", "--bounds", "foo", "--dispatch", "4", "x.wgsl"]]


def _said(parse, argv):
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            ns = parse(argv)
            code = None
        except SystemExit as e:
            ns, code = None, e.code
    return code, out.getvalue(), err.getvalue(), ns and {k: v for k, v in vars(ns).items() if k != "func"}


@pytest.mark.parametrize("argv", BAD + [["run", "--help"]], ids=" ".join)
def test_rejected_lines_said_as_the_whole_parser_says_them(argv):
    whole = _said(lambda a: cli.build_parser().parse_args(a), argv)
    assert whole[0] not in (None,)
    assert _said(cli._parse, argv) == whole


def test_accepted_lines_parse_alike():
    argv = ["run", "k.wgsl", "--dispatch", "4,4", "--buffer", "0:0=a.npy", "--output", "0:1=b.npy",
            "--override", "N=4", "--jobs", "2", "--trace", "t.jsonl", "--trace-ops", "coop"]
    assert cli.build_parser("run").reduced
    assert _said(cli._parse, argv) == _said(lambda a: cli.build_parser().parse_args(a), argv)
