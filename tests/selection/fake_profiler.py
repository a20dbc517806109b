"""Stands in for tiledispatch_profiler's sweep mode (--direction --dtype --problems --csv [--split-k]).

It writes the real profiler's CSV columns with timings from tests/selection/synthetic.py over the kernels
listed (one name per line) in $FAKE_KERNELS. Misbehaviour for the harness tests, keyed by problem name:
- $FAKE_CRASH_ONCE=<name>: the first batch holding it dies (exit 139) and leaves a marker in $FAKE_STATE;
- $FAKE_CRASH=<name>: every batch holding it dies;
- $FAKE_HANG=<name>: every batch holding it sleeps past any timeout;
- $FAKE_LOG=<file>: appends "<direction> <dtype> <CUDA_VISIBLE_DEVICES> <names...>" per call.
"""

import csv
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

COLUMNS = [
    "kernel",
    "problem_idx",
    "N",
    "C",
    "K",
    "G",
    "Hi",
    "Wi",
    "Y",
    "X",
    "stride_h",
    "stride_w",
    "pad_h",
    "pad_w",
    "latency_ms",
    "tflops",
    "non_zero",
    "direction",
    "dtype",
    "instance_string",
    "verified",
    "problem_name",
    "status",
    "reason",
    "split_k",
    "gb_per_s",
    "rel_l2_error",
    "ndim",
    "Di",
    "Z",
    "stride_d",
    "pad_d",
    "dilation_d",
    "dilation_h",
    "dilation_w",
    "right_pad_d",
    "right_pad_h",
    "right_pad_w",
]


def main(argv: list[str]) -> int:
    args = dict(zip(argv[::2], argv[1::2], strict=False))
    direction, dtype = args["--direction"], args["--dtype"]
    with open(args["--problems"], newline="") as f:
        names = [row["name"] for row in csv.DictReader(f)]
    if log := os.environ.get("FAKE_LOG"):
        with open(log, "a") as f:
            f.write(f"{direction} {dtype} {os.environ.get('CUDA_VISIBLE_DEVICES', '-')} {' '.join(names)}\n")
    if os.environ.get("FAKE_HANG") in names:
        time.sleep(60)
    if os.environ.get("FAKE_CRASH") in names:
        return 139
    if (target := os.environ.get("FAKE_CRASH_ONCE")) in names:
        marker = Path(os.environ["FAKE_STATE"]) / f"crashed_{target}"
        if not marker.exists():
            marker.write_text("1")
            return 139
    # Imported only now, so that misbehaviour above costs no start-up time.
    from generators.problem import load_problems
    from tests.selection import synthetic

    problems = load_problems(args["--problems"])
    kernels = [
        k for k in Path(os.environ["FAKE_KERNELS"]).read_text().split() if f"_{direction}_{dtype}_" in k
    ]
    # Without --split-k the real profiler tries each instance's candidates; the fake's are 1, 2 and 3.
    split_text = args.get("--split-k", "1,2,3") if direction == "bwd_weight" else "1"
    split_ks = [int(s) for s in split_text.split(",")]
    with open(args["--csv"], "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS)
        for index, p in enumerate(problems):
            ndim = p.ndim_spatial
            for kernel in sorted(k for k in kernels if f"_{ndim}d_" in k):
                ok = synthetic.supported(p, direction, kernel)
                for split_k in split_ks if ok else [1]:
                    lat = synthetic.latency_ms(p, direction, dtype, kernel, split_k) if ok else None
                    tf = synthetic.tflops(p, direction, dtype, kernel, split_k) if ok else None
                    writer.writerow(
                        [
                            kernel,
                            index,
                            p.N,
                            p.C,
                            p.K,
                            p.G,
                            p.Hi,
                            p.Wi,
                            p.Y,
                            p.X,
                            p.stride_h,
                            p.stride_w,
                            p.pad_h,
                            p.pad_w,
                            f"{lat:.5f}" if ok else "",
                            f"{tf:.3f}" if ok else "",
                            1 if ok else 0,
                            direction,
                            dtype,
                            f"Instance<{kernel}>",
                            1 if ok else "",
                            p.name,
                            "valid" if ok else "not_supported",
                            "" if ok else "vector does not divide channels",
                            split_k,
                            "",
                            "",
                            ndim,
                            p.Di,
                            p.Z,
                            p.stride_d,
                            p.pad_d,
                            p.dilation_d,
                            p.dilation_h,
                            p.dilation_w,
                            p.pad_d,
                            p.pad_h,
                            p.pad_w,
                        ]
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
