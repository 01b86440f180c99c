"""bench/attention_variants.py without a GPU: a copy of attention.py named by --sources becomes a
side of its own, run as the library runs it on Hopper; a bad --sources is refused by name."""

import importlib.util
import pathlib

import pytest

from tilec.ops import attention

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("attention_variants", ROOT / "bench" / "attention_variants.py")
attention_variants = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(attention_variants)


def test_a_source_copy_is_a_side_of_its_own(tmp_path):
    copy = tmp_path / "attention_before.py"
    copy.write_text((ROOT / "python" / "tilec" / "ops" / "attention.py").read_text().replace(
        "HOPPER_OVERLAP_DIMS = (64, 128)", "HOPPER_OVERLAP_DIMS = (64,)"))
    module = attention_variants.source_module("before", copy)
    assert module is not attention and module.HOPPER_OVERLAP_DIMS == (64,)
    sides = attention_variants.sides(["plain"], {"before": module}, 128)
    assert sides["plain"] == (attention, False, {})
    assert sides["before"] == (module, True, {"overlap": False})
    assert attention_variants.sides([], {"before": module}, 64)["before"][2] == {"overlap": True}


@pytest.mark.parametrize("sources", ["before", "=x.py", "plain=" + __file__, "before=/no/such/file.py"])
def test_a_bad_source_is_refused_by_name(sources, capsys):
    with pytest.raises(SystemExit):
        attention_variants.main(["--sources", sources, "--variants", ""])
    assert repr(sources) in capsys.readouterr().err


def test_an_unknown_variant_is_refused():
    with pytest.raises(SystemExit):
        attention_variants.main(["--variants", "overlap,nonesuch"])
