"""bench/ncu_by_warpgroup.py: ncu's per-instruction samples split at each warpgroup's USETMAXREG."""

import csv
import importlib.util
import io
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("ncu_by_warpgroup", ROOT / "bench" / "ncu_by_warpgroup.py")
ncu_by_warpgroup = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ncu_by_warpgroup)

# ncu's layout: a kernel-name line, the header, then one line a SASS instruction (numbers may
# carry thousands separators).
TABLE = '''"Kernel Name","tilec_main",
"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed","stall_long_sb","stall_wait","stall_long_sb (Not Issued)"
"0x10","S2R R0, SR_TID.X","4","1,024","1","3","9"
"0x20","USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0xc8","2","512","0","2","9"
"0x30","HGMMA.64x64x16.F32.BF16 R152, gdesc[UR8], RZ","10","2,048","2","8","9"
"0x40","USETMAXREG.DEALLOC.CTAPOOL 0x68","1","512","1","0","9"
"0x50","LDGSTS.E.BYPASS.128 [R77], desc[UR16][R44.64], P5","23","4,096","20","3","9"
'''


def test_samples_and_instructions_go_to_the_warpgroup_whose_code_they_are_in():
    by_region = ncu_by_warpgroup.regions(list(csv.reader(io.StringIO(TABLE))))
    assert sorted(by_region) == [0, 1, 2]
    samples, executed, stalls, instructions = by_region[1]
    assert (samples, executed) == (12, 2560)
    assert stalls == {"stall_long_sb": 2, "stall_wait": 10}  # the Not Issued columns left out
    assert [address for _, address, _ in instructions] == ["0x20", "0x30"]
    assert by_region[2][0] == 24 and by_region[2][2]["stall_long_sb"] == 21


def test_the_report_gives_shares_and_instructions_a_warp_a_step():
    by_region = ncu_by_warpgroup.regions(list(csv.reader(io.StringIO(TABLE))))
    text = ncu_by_warpgroup.report(by_region, warp_steps=256, top=1)
    assert "region 1: 30.0% of samples, 10 instructions a warp a step" in text
    assert "stall_wait: 83.3%" in text
    assert "region 2: 60.0% of samples, 18 instructions a warp a step" in text
    assert "LDGSTS.E.BYPASS.128" in text and "HGMMA" in text and "S2R" in text
