#!/usr/bin/env bash
# One call on the GPU machine: build hand_depthwise_check (hand_depthwise.cu, hand_depthwise_bwd.cu; units
# compiled in parallel), run it (every instance against the reference, then the timed large layers), then
# compute-sanitizer memcheck and racecheck without the large layers, and cuDNN on the given problem tables
# (bench/gpu_check/depthwise_cudnn.py, for comparing GB/s). Logs go to $OUT (or build/gpu_check).
# Usage (repository root): bash bench/gpu_check/run_depthwise_check.sh [PROBLEMS.csv ...]
# (python3 must import the generators' packages, pydantic and jinja2: it writes the arch header the kernels read.)
set -u -o pipefail
ROOT=$(pwd)
OUTDIR=${OUT:-$ROOT/build/gpu_check}
B=build/gpu_check_depthwise
mkdir -p "$OUTDIR" $B
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
python3 -m generators arch-header --out-dir $B/include || exit 1
FLAGS=(-std=c++17 -O3 --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a -Iinstances/include -I$B/include)
compile() { "$NVCC" "${FLAGS[@]}" -Xptxas -v -c "$1" -o "$2" >"$2.log" 2>&1 || { echo "COMPILE FAILED: $1"; tail -30 "$2.log"; return 1; }; }
pids=()
for unit in hand_depthwise hand_depthwise_bwd hand_depthwise_check; do
  compile bench/gpu_check/$unit.cu $B/$unit.o & pids+=($!)
done
compile instances/src/registry.cpp $B/registry.o & pids+=($!)
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
cat $B/*.log | grep -iE "spill|stack frame" | grep -v " 0 bytes spill" > "$OUTDIR/depthwise_spills.txt" || true
[ $status -eq 0 ] || { echo "build failed"; exit 1; }
"$NVCC" -cudart=static $B/hand_depthwise.o $B/hand_depthwise_bwd.o $B/hand_depthwise_check.o $B/registry.o \
  -o $B/hand_depthwise_check || exit 1
echo "== hand_depthwise_check"
$B/hand_depthwise_check > "$OUTDIR/hand_depthwise_check.txt" 2>&1; check_rc=$?
grep -E "^FAILED" "$OUTDIR/hand_depthwise_check.txt" | head -20
tail -1 "$OUTDIR/hand_depthwise_check.txt"
SAN=/usr/local/cuda/bin/compute-sanitizer
for tool in memcheck racecheck; do
  echo "== compute-sanitizer $tool (no large layer, no timing)"
  timeout 300 $SAN --tool $tool --print-limit 20 $B/hand_depthwise_check --no-large --no-timing \
    > "$OUTDIR/depthwise_$tool.txt" 2>&1
  echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|hazard" "$OUTDIR/depthwise_$tool.txt" | head -5
  tail -1 "$OUTDIR/depthwise_$tool.txt"
done
for table in "$@"; do
  echo "== cuDNN on $table"
  python3 bench/gpu_check/depthwise_cudnn.py "$table" --warmup 3 --repeat 10 | tee "$OUTDIR/cudnn_$(basename "$table" .csv).txt"
done
echo "hand_depthwise_check rc=$check_rc spilling kernels: $(wc -l < "$OUTDIR/depthwise_spills.txt")"
exit $check_rc
