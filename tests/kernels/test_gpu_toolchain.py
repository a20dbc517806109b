"""The GPU checks' summary parsing (gpu_toolchain.passed_check), on the CPU: every summary format the check
programs print, a failing run named by its FAIL lines, and output that is not a summary."""

from __future__ import annotations

import pytest

from tests.kernels.gpu_toolchain import passed_check, summary_counts


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("0 failures", {"failures": 0}),
        ("57 checked, 0 failures", {"checked": 57, "failures": 0}),
        (
            "78 checked, 73 phases, 28 in one launch, 0 failures",
            {"checked": 78, "phases": 73, "in one launch": 28, "failures": 0},
        ),
        (
            "345 checked, 175 transposed, 117 first generation, 16 direct, 233 bit-identical reruns, "
            "2 failures",
            {
                "checked": 345,
                "transposed": 175,
                "first generation": 117,
                "direct": 16,
                "bit-identical reruns": 233,
                "failures": 2,
            },
        ),
    ],
)
def test_summary_counts_by_name(line: str, expected: dict[str, int]) -> None:
    assert summary_counts(line) == expected


def test_passed_check_returns_lines_and_counts() -> None:
    lines, counts = passed_check("PASS a | x\nPASS b | y\n2 checked, 1 diagonal, 0 failures\n")
    assert lines[:2] == ["PASS a | x", "PASS b | y"]
    assert counts == {"checked": 2, "diagonal": 1, "failures": 0}


def test_failures_are_named_by_their_lines() -> None:
    with pytest.raises(AssertionError, match=r"FAIL b \| relative L2 0\.5"):
        passed_check("PASS a\nFAIL b | relative L2 0.5\n2 checked, 1 failures\n")


@pytest.mark.parametrize(
    "output", ["", "PASS a\n", "3 checked\n", "checked: 3, failures: 0\n", "3 checked, 0 failures, done\n"]
)
def test_output_without_a_summary_fails(output: str) -> None:
    with pytest.raises(AssertionError):
        passed_check(output)
