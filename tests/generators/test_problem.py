"""Problem math against hand-computed values, validation, and the CSV loader's error paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from generators.problem import CSV_COLUMNS, ConvProblem, ProblemFileError, load_problems

PROBLEMS = Path(__file__).resolve().parents[3] / "shared" / "problems"

# dev_suite.csv row stem_7x7_s2: 32,3,64,1,1,224,224,1,7,7,1,2,2,0,3,3,1,1,1
STEM = ConvProblem(N=32, C=3, K=64, G=1, Hi=224, Wi=224, Y=7, X=7, stride_h=2, stride_w=2, pad_h=3, pad_w=3)


def test_stem_7x7_stride2():
    # Ho = (224 + 2*3 - 6 - 1) // 2 + 1 = 112
    assert STEM.output_spatial == (1, 112, 112)
    assert STEM.ndim_spatial == 2
    # 2 * 32 * 64 * 112*112 * 3 * 49
    assert STEM.flops == 7_552_892_928
    assert STEM.gemm("fwd") == (32 * 112 * 112, 64, 3 * 49)
    assert STEM.gemm("bwd_data") == (32 * 224 * 224, 3, 64 * 49)
    assert STEM.gemm("bwd_weight") == (64, 3 * 49, 32 * 112 * 112)
    # fp16: input 32*224*224*3 + weight 64*3*49 + output 32*112*112*64 elements, 2 bytes each
    assert STEM.bytes("fp16") == 2 * (4_816_896 + 9_408 + 25_690_112)


def test_grouped_3d_with_dilation():
    p = ConvProblem(N=2, C=64, K=128, G=32, Di=8, Hi=16, Wi=16, Z=3, Y=3, X=3, pad_d=2, pad_h=2, pad_w=2,
                    dilation_d=2, dilation_h=2, dilation_w=2, stride_d=2)  # fmt: skip
    # Do = (8 + 4 - 4 - 1) // 2 + 1 = 4; Ho = Wo = (16 + 4 - 4 - 1) // 1 + 1 = 16
    assert p.output_spatial == (4, 16, 16)
    assert p.ndim_spatial == 3
    assert p.gemm("fwd") == (2 * 4 * 16 * 16, 4, 2 * 27)
    assert p.flops == 2 * 2 * 128 * (4 * 16 * 16) * 2 * 27


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (dict(C=3, G=2), "C 3 is not divisible by G 2"),
        (dict(K=64, G=3, C=3), "K 64 is not divisible by G 3"),
        (dict(Hi=3, pad_h=0), "output size Ho"),
        (dict(N=0), "greater than 0"),
    ],
)
def test_invalid_problems(changes, message):
    fields = dict(N=1, C=4, K=4, G=1, Hi=8, Wi=8, Y=7, X=7, pad_h=3, pad_w=3)
    fields.update(changes)
    with pytest.raises(ValueError, match=message):
        ConvProblem(**fields)


@pytest.mark.skipif(not PROBLEMS.is_dir(), reason=f"{PROBLEMS} not present")
def test_shared_problem_files_load():
    suite = load_problems(PROBLEMS / "dev_suite.csv")
    assert suite[0].name == "stem_7x7_s2"
    assert suite[0].model_dump(exclude={"name"}) == STEM.model_dump(exclude={"name"})
    assert len(load_problems(PROBLEMS / "forward_synthetic_extended.csv")) > 100


HEADER = ",".join(CSV_COLUMNS) + "\n"
GOOD = "1,64,64,1,1,8,8,1,3,3,1,1,1,0,1,1,1,1,1\n"


def test_one_error_per_bad_row(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text(HEADER + GOOD + GOOD.replace("1,64,64,1", "1,6x,64,1") + "1,2,3\n" + GOOD.replace(
        "1,64,64,1,", "1,64,64,3,"))  # fmt: skip
    with pytest.raises(ProblemFileError) as caught:
        load_problems(path)
    errors = caught.value.errors
    assert len(errors) == 3
    assert errors[0].startswith(f"{path}:3: column C value '6x'")
    assert errors[1] == f"{path}:4: 3 values for 19 columns"
    assert errors[2].startswith(f"{path}:5:") and "not divisible by G 3" in errors[2]


def test_header_and_missing_file(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text(HEADER.replace("dilation_w", "dilation_q") + GOOD)
    with pytest.raises(ProblemFileError, match="missing columns dilation_w; unknown columns dilation_q"):
        load_problems(path)
    with pytest.raises(ProblemFileError, match="cannot read"):
        load_problems(tmp_path / "absent.csv")
