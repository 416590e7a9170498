"""One error tree: every user-facing error class is an EmuError, defined at the bottom layer."""
import pickle

import pytest

from emu.errors import EmuError, HostError, HwError, InvalidArgument, UsageError, WgslError
from emu.frontend.wgsl.errors import WgslError as FrontEndWgslError
from emu.hw.adapters import HwError as AdapterHwError


def test_tree():
    for cls in (WgslError, HwError, UsageError, HostError, InvalidArgument):
        assert issubclass(cls, EmuError)
    assert FrontEndWgslError is WgslError and AdapterHwError is HwError
    assert issubclass(InvalidArgument, ValueError) and issubclass(HwError, RuntimeError)


def test_wgsl_error_formats_as_before():
    e = WgslError("expected ';'", hint="add ';'", file="a.wgsl", line=2, col=5)
    assert str(e) == "a.wgsl:2:5: error: expected ';'\n   hint: add ';'"
    assert e.format("x\nlet y = 1\n") == ("a.wgsl:2:5: error: expected ';'\n   let y = 1\n       ^\n"
                                         "   hint: add ';'")
    assert e.format({"a.wgsl": "x\nlet y = 1\n"}) == e.format("x\nlet y = 1\n")
    assert pickle.loads(pickle.dumps(e)).format() == e.format()


def test_plain_messages_stay_plain():
    assert str(UsageError("bad flag")) == "bad flag" and UsageError("bad flag").format() == "emu: error: bad flag"
    assert str(HwError("no adapter")) == "no adapter"
    with pytest.raises(ValueError, match="^size must be > 0$"):
        raise InvalidArgument("size must be > 0")
