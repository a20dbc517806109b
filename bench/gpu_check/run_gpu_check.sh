#!/usr/bin/env bash
# One call on the GPU machine: build the reference self-check and the GPU check (hand-written instance set),
# run both, then compute-sanitizer memcheck on a few problems. Logs go to $OUT (or build/gpu_check).
# Usage (repository root): bash bench/gpu_check/run_gpu_check.sh [cutlass_include_dir]
# (python3 must import the generators' packages, pydantic and jinja2: it writes the arch header the kernels read.)
set -u -o pipefail
ROOT=$(pwd)
OUTDIR=${OUT:-$ROOT/build/gpu_check}
mkdir -p "$OUTDIR" build/gpu_check
CUTE=${1:-/tmp/site/cutlass_library/source/include}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
B=build/gpu_check
python3 -m generators arch-header --out-dir $B/include || exit 1
FLAGS=(-std=c++17 -O3 --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a -isystem "$CUTE" -Iinstances/include -I$B/include)
compile() { "$NVCC" "${FLAGS[@]}" -Xptxas -v -c "$1" -o "$2" >"$2.log" 2>&1 || { echo "COMPILE FAILED: $1"; tail -30 "$2.log"; return 1; }; }
pids=()
for unit in hand_fwd hand_bwd_data hand_bwd_weight hand_streamk hand_depthwise check_main; do
  compile bench/gpu_check/$unit.cu $B/$unit.o & pids+=($!)
done
compile instances/src/registry.cpp $B/registry.o & pids+=($!)
"$NVCC" "${FLAGS[@]}" tests/kernels/reference_check.cu -o $B/reference_check >$B/reference_check.log 2>&1 & pids+=($!)
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
cat $B/*.log | grep -iE "spill|stack frame" | grep -v " 0 bytes spill" > "$OUTDIR/spills.txt" || true
[ $status -eq 0 ] || { echo "build failed"; exit 1; }
"$NVCC" -cudart=static $B/hand_fwd.o $B/hand_bwd_data.o $B/hand_bwd_weight.o $B/hand_streamk.o $B/hand_depthwise.o $B/check_main.o $B/registry.o -o $B/gpu_check || exit 1
echo "== reference self-check (GPU reference vs float64 CPU)"
$B/reference_check > "$OUTDIR/reference_check.txt" 2>&1; ref_rc=$?
tail -1 "$OUTDIR/reference_check.txt"
echo "== GPU check"
$B/gpu_check --verbose > "$OUTDIR/gpu_check.txt" 2>&1; check_rc=$?
grep -E "^FAILED" "$OUTDIR/gpu_check.txt" | head -40
sed -n '/not-supported reasons/,$p' "$OUTDIR/gpu_check.txt"
echo "== compute-sanitizer memcheck (no large layer)"
SAN=/usr/local/cuda/bin/compute-sanitizer
if [ -x "$SAN" ]; then
  timeout 240 $SAN --tool memcheck --print-limit 20 $B/gpu_check --no-large > "$OUTDIR/memcheck.txt" 2>&1; san_rc=$?
  grep -E "ERROR SUMMARY|Invalid|out of bounds" "$OUTDIR/memcheck.txt" | head -10; echo "memcheck rc=$san_rc"
else
  echo "compute-sanitizer not found"
fi
echo "reference_check rc=$ref_rc gpu_check rc=$check_rc spilling kernels: $(wc -l < "$OUTDIR/spills.txt")"
